import Foundation
import ShortcutSyncBench
import ShortcutSyncDomain
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncWorker
import Testing

/// `bench worker` on a small log: every part sees the whole log, and the maintenance tasks' projections
/// are the fold of it (a benchmark that measured a broken run would be worse than none).
@Suite struct WorkerBenchmarkTests {
    @Test func aSmallRunMeasuresTheWholeLogAndLeavesCorrectProjections() async throws {
        try await TestDatabase.withClient { client, url in
            let shape = WorkerBenchmark.Shape(accounts: 3, eventsPerAccount: 120)
            let result = try await WorkerBenchmark(shape: shape, database: url, logger: TestDatabase.shared.logger).run()
            for part in [result.fill, result.rawOrderedRead, result.catchUp, result.rebuild] {
                #expect(part.events == 360, "\(part.name)")
                #expect(part.seconds > 0, "\(part.name)")
            }
            #expect(try await eventCount(client) == 360)
            let store = ProjectionStore(client: client, logger: TestDatabase.shared.logger)
            #expect(try await store.status().accountsBehind == 0)
            #expect(try await store.rebuilder.verify().differences == [])
            let decoded = try JSONDecoder().decode(WorkerBenchmark.Result.self, from: JSONEncoder().encode(result))
            #expect(decoded == result)
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
