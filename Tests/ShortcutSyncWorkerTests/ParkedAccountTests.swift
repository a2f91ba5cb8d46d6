import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// One account's data never stops the worker for the others (DESIGN §6).
@Suite struct ParkedAccountTests {
    @Test func anAccountThatCannotBeFoldedIsParkedWhileTheOthersGoOnAndComesBackOnceCleared() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var poisoned = DeviceScript(account: UUID(), detail: .full)
            var healthy = DeviceScript(account: UUID(), detail: .full)
            var worker = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 100)
            worker.reconnectDelay = (.milliseconds(20), .milliseconds(100))
            worker.parkedRetry = (check: .milliseconds(50), first: .milliseconds(50), longest: .milliseconds(200))
            func expectView(of device: DeviceScript) async throws {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                        == log.expectedView(account: device.account, device: device.deviceId))
            }

            try await whileRunning(worker) {
                try await log.push(poisoned, [poisoned.donate("soup-1", at: 10)])
                try await log.push(healthy, [healthy.donate("tea-1", bundle: "com.example.tea", at: 10)])
                worker.nudge()
                try await store.waitUntilCaughtUp()
                let cursor = try await store.pull(account: poisoned.account, device: poisoned.deviceId, cursor: nil).cursor

                // One account's next rows break a constraint put there on purpose.
                try await client.query("""
                    ALTER TABLE projection_shortcuts ADD CONSTRAINT poisoned
                    CHECK (account_id <> '\(unescaped: poisoned.account.uuidString)') NOT VALID
                    """)
                try await log.push(poisoned, [poisoned.donate("soup-2", at: 20), poisoned.delete(.identifiers(["soup-1"]), at: 21)])
                try await log.push(healthy, [healthy.donate("tea-2", bundle: "com.example.tea", at: 20)])
                worker.nudge()
                try await eventually("the account that cannot be folded is parked") { try await store.status().parkedAccounts == 1 }
                try await store.waitUntilCaughtUp()
                try await expectView(of: healthy)

                // The other account keeps syncing while it is parked; its own events wait.
                try await log.push(healthy, [healthy.delete(.all, bundle: "com.example.tea", at: 30), healthy.donate("tea-3", bundle: "com.example.tea", at: 31)])
                try await log.push(poisoned, [poisoned.donate("soup-3", at: 30)])
                worker.nudge()
                try await store.waitUntilCaughtUp()
                try await expectView(of: healthy)
                #expect(try await store.status().parkedAccounts == 1)
                #expect(try await store.fullView(account: poisoned.account, device: poisoned.deviceId).shortcuts.count == 1)

                // Cleared: the account folds again from its whole log, and old cursors get the whole view.
                try await client.query("ALTER TABLE projection_shortcuts DROP CONSTRAINT poisoned")
                try await eventually("the account is no longer parked") { try await store.status().parkedAccounts == 0 }
                try await expectView(of: poisoned)
                let pull = try await store.pull(account: poisoned.account, device: poisoned.deviceId, cursor: cursor)
                #expect(pull.reset)
                #expect(DeviceView.empty.applying(pull.changes) == log.expectedView(account: poisoned.account, device: poisoned.deviceId))
                #expect(try await store.pull(account: poisoned.account, device: poisoned.deviceId, cursor: pull.cursor).changes.isEmpty)

                // And it folds on as before.
                try await log.push(poisoned, [poisoned.donate("soup-4", at: 40)])
                worker.nudge()
                try await store.waitUntilCaughtUp()
                try await expectView(of: poisoned)
                #expect(try await store.rebuilder.verify().differences == [])
            }
        }
    }
}
