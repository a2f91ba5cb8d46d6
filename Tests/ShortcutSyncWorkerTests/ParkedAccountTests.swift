import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// One account's data never stops the others (DESIGN §6): a push whose fold fails is still
/// accepted (stored, not folded), its account is parked, and the maintenance tasks try it again
/// with a growing pause until it folds.
@Suite struct ParkedAccountTests {
    @Test func aPushThatCannotBeFoldedIsKeptItsAccountParkedWhileTheOthersGoOnAndFoldedOnceCleared() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var poisoned = DeviceScript(account: UUID(), detail: .full)
            var healthy = DeviceScript(account: UUID(), detail: .full)
            var worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 100, idlePoll: .milliseconds(20))
            worker.parkedRetry = (first: .milliseconds(50), longest: .milliseconds(200))
            func expectView(of device: DeviceScript) async throws {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                        == log.expectedView(account: device.account, device: device.deviceId))
            }

            try await log.push(poisoned, [poisoned.donate("soup-1", at: 10)])
            try await log.push(healthy, [healthy.donate("tea-1", bundle: "com.example.tea", at: 10)])
            let cursor = try await store.pull(account: poisoned.account, device: poisoned.deviceId, cursor: nil).cursor

            // One account's next rows break a constraint put there on purpose.
            try await client.query("""
                ALTER TABLE projection_shortcuts ADD CONSTRAINT poisoned
                CHECK (account_id <> '\(unescaped: poisoned.account.uuidString)') NOT VALID
                """)
            let refused = try await log.push(poisoned, [poisoned.donate("soup-2", at: 20), poisoned.delete(.identifiers(["soup-1"]), at: 21)])
            #expect(refused.appended == 2 && !refused.folded, "the push is acknowledged, its fold left for later")
            #expect(try await store.status().parkedAccounts == 1)
            #expect(try await log.push(healthy, [healthy.donate("tea-2", bundle: "com.example.tea", at: 20)]).folded)
            try await expectView(of: healthy)

            try await whileRunning(worker) {
                // The other account keeps syncing while it is parked; its own pushes wait, stored.
                #expect(try await log.push(healthy, [healthy.delete(.all, bundle: "com.example.tea", at: 30),
                                                     healthy.donate("tea-3", bundle: "com.example.tea", at: 31)]).folded)
                #expect(try await !log.push(poisoned, [poisoned.donate("soup-3", at: 30)]).folded)
                try await expectView(of: healthy)
                try await eventually("the tasks tried it again, and failed") {
                    try await client.query("SELECT coalesce(max(attempts), 0) FROM projection_parked_accounts")
                        .decode(Int32.self).collectAll().first ?? 0 >= 2
                }
                let parked = try await store.status()
                #expect(parked.parkedAccounts == 1 && parked.accountsBehind == 1)
                #expect(try await store.fullView(account: poisoned.account, device: poisoned.deviceId).shortcuts.count == 1)

                // Cleared: the tasks fold it on their next try, and its devices' cursors go on.
                try await client.query("ALTER TABLE projection_shortcuts DROP CONSTRAINT poisoned")
                try await eventually("the account is folded and no longer parked") {
                    let status = try await store.status()
                    return status.parkedAccounts == 0 && status.accountsBehind == 0
                }
            }
            try await expectView(of: poisoned)
            let pull = try await store.pull(account: poisoned.account, device: poisoned.deviceId, cursor: cursor)
            #expect(!pull.reset)
            // And it folds in its pushes again.
            #expect(try await log.push(poisoned, [poisoned.donate("soup-4", at: 40)]).folded)
            try await expectView(of: poisoned)
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }
}
