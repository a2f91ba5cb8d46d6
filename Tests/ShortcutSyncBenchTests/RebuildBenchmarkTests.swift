import Foundation
import ShortcutSyncBench
import ShortcutSyncDomain
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncWorker
import Testing

/// `bench rebuild` on a small log: every part sees the whole log, and the maintenance tasks' projections
/// are the fold of it (a benchmark that measured a broken run would be worse than none).
@Suite struct RebuildBenchmarkTests {
    @Test func aSmallRunMeasuresTheWholeLogAndLeavesCorrectProjections() async throws {
        try await TestDatabase.withClient { client, url in
            let shape = RebuildBenchmark.Shape(accounts: 3, eventsPerAccount: 120)
            let result = try await RebuildBenchmark(shape: shape, database: url, logger: TestDatabase.shared.logger).run()
            for part in [result.fill, result.rawOrderedRead, result.catchUp, result.rebuild] {
                #expect(part.events == 360, "\(part.name)")
                #expect(part.seconds > 0, "\(part.name)")
            }
            #expect(try await eventCount(client) == 360)
            let store = ProjectionStore(client: client, logger: TestDatabase.shared.logger)
            #expect(try await store.status().accountsBehind == 0)
            #expect(try await store.rebuilder.verify().differences == [])
            let decoded = try JSONDecoder().decode(RebuildBenchmark.Result.self, from: JSONEncoder().encode(result))
            #expect(decoded == result)
        }
    }

    /// Live traffic interleaves accounts in the log (DESIGN §8): the fill must too. Each of its
    /// writers takes its accounts round robin, one 10-event batch each, so no account ever has
    /// more than one batch in a row in the log.
    @Test func theFillInterleavesAccountsAsLiveTrafficDoes() async throws {
        try await TestDatabase.withClient { client, url in
            let shape = RebuildBenchmark.Shape(accounts: 16, eventsPerAccount: 30)
            _ = try await RebuildBenchmark(shape: shape, database: url, logger: TestDatabase.shared.logger).run()
            let rows = try await client.query("SELECT account_id FROM events ORDER BY position", logger: TestDatabase.shared.logger)
            var longestRun = 0, run = 0, previous: UUID?
            for try await account in rows.decode(UUID.self) {
                run = account == previous ? run + 1 : 1
                longestRun = max(longestRun, run)
                previous = account
            }
            #expect(longestRun <= RebuildBenchmark.liveBatch, "the longest stretch of one account's events in the log")
        }
    }

    @Test func theSameSeedGivesTheSameHistory() {
        var first = BenchmarkHistory(seed: 42), second = BenchmarkHistory(seed: 42)
        for _ in 0..<20 {
            let (a, b) = (first.nextBatch(count: 7), second.nextBatch(count: 7))
            #expect(a.device == b.device)
            #expect(a.events.map(\.body) == b.events.map(\.body))
            #expect(a.events.map(\.seq) == b.events.map(\.seq))
        }
    }
}
