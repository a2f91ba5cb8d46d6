import Foundation
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
            var scenario = Scenario(seed: 3, accounts: 3, devicesPerAccount: 4)
            var log = PushLog(client: client)
            var total = 0
            while total < 9000 {
                let (device, events) = scenario.push(maxEvents: 200)
                try await log.push(device, events)
                total += events.count
            }
            let store = ProjectionStore(client: client, logger: logger)
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection, batchSize: 1000) }

            var rebuilder = store.rebuilder
            rebuilder.accountsPerWrite = 1
            let seen = ProgressLog()
            let verification = try await rebuilder.verify { await seen.record($0) }
            #expect(verification.differences == [])
            #expect(await seen.last?.processed == total)
            // And both are the domain's fold of each account's events.
            for device in scenario.devices {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                    == log.expectedView(account: device.account, device: device.deviceId))
            }
        }
    }
}
