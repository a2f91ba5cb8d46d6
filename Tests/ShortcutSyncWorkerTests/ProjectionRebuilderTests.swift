import Foundation
import ShortcutSyncBench
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The rebuild of DESIGN §6: account by account below the horizon, then the live code.
@Suite struct ProjectionRebuilderTests {
    /// Thousands of events per account stream in while rows are written after every account: a
    /// stream and writes on one connection would wait for each other forever.
    @Test func aRebuildWritingWhileItStreamsALargeLogFinishesAndEqualsTheLiveFold() async throws {
        try await TestDatabase.withClient { client, url in
            let log = PostgresEventStore(client: client, logger: logger)
            var accepted: [UUID: [AcceptedEvent]] = [:]
            for seed in 1...3 {
                let account = UUID()
                var history = BenchmarkHistory(seed: UInt64(seed))
                for _ in 0..<15 {
                    let (device, events) = history.nextBatch(count: 200)
                    try await log.append(events, account: account, device: device)
                    accepted[account, default: []] += events.map { AcceptedEvent(deviceId: device, event: $0) }
                }
            }
            let store = ProjectionStore(client: client, logger: logger)
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection, batchSize: 1000) }

            var rebuilder = store.rebuilder
            rebuilder.accountsPerWrite = 1
            let seen = ProgressLog()
            let verification = try await rebuilder.verify { await seen.record($0) }
            #expect(verification.differences == [])
            #expect(await seen.last?.processed == 9000)
            // And both are the domain's fold of each account's events.
            for (account, events) in accepted {
                let device = events[0].deviceId
                #expect(try await store.fullView(account: account, device: device) == AccountState(folding: events).view(forDevice: device))
            }
        }
    }
}
