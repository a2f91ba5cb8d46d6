import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The queue of accounts behind their head (DESIGN §6): tasks take accounts with `FOR UPDATE
/// SKIP LOCKED`, so no two take the same one, and a task that dies hands its account on.
@Suite struct MaintenanceQueueTests {
    /// A task holds the account it took until its transaction ends: another task takes another
    /// account meanwhile, or none; when the first task's connection dies (its transaction with
    /// it), the account is taken by the next task and folded.
    @Test func anAccountHeldByATaskIsSkippedAndTakenByAnotherWhenItsTransactionDies() async throws {
        try await TestDatabase.withClient { client, url in
            var first = DeviceScript(account: UUID(), detail: .full)
            var second = DeviceScript(account: UUID(), detail: .full)
            try await writeBacklog([first.donate("soup", at: 100)], account: first.account, client: client)
            try await writeBacklog([second.donate("tea", at: 100)], account: second.account, client: client)
            let rows = ProjectionRowStore(tables: .live, logger: logger)

            let dying = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 1, logger: logger)
            try await dying.query("BEGIN", logger: logger)
            let held = try #require(try await rows.takeAccountBehind(on: dying))
            let other = try await withConnection(url) { connection in
                try await connection.inTransaction(logger: logger) { connection in
                    let other = try #require(try await rows.takeAccountBehind(on: connection))
                    // Both accounts are held now: a third task finds nothing to take.
                    let third = try await withConnection(url) { third in
                        try await third.inTransaction(logger: logger) { try await rows.takeAccountBehind(on: $0) }
                    }
                    #expect(third == nil)
                    return other
                }
            }
            #expect(Set([held.accountId, other.accountId]) == [first.account, second.account])

            // The worker folds the account the second task let go of, not the held one.
            let store = ProjectionStore(client: client, logger: logger)
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger)
            #expect(try await worker.foldNext())
            #expect(try await !worker.foldNext())
            #expect(try await store.head(account: other.accountId) == (1, 1))
            #expect(try await store.head(account: held.accountId) == (1, 0))

            // The holder dies without committing: its account is taken and folded by another task,
            // once the server has ended the dead session (on Citus, the worker's session too).
            try await dying.close()
            try await eventually("the account the dead task held is taken") { try await worker.foldNext() }
            #expect(try await store.head(account: held.accountId) == (1, 1))
            #expect(try await store.status().accountsBehind == 0)
        }
    }

    /// Several tasks folding side by side never fold one account twice: each account behind is
    /// folded by one of them, once, and the views are the domain's fold of each account's events.
    @Test func tasksFoldingSideBySideFoldEachAccountOnce() async throws {
        try await TestDatabase.withClient { client, _ in
            var devices = (0..<12).map { _ in DeviceScript(account: UUID(), detail: .full) }
            var backlogs: [UUID: [AcceptedEvent]] = [:]
            for index in devices.indices {
                let events = (0..<20).map { devices[index].donate("soup-\($0 % 3)", group: $0 % 2 == 0 ? "lunch" : nil, at: 100 + Int64($0)) }
                backlogs[devices[index].account] = events
                try await writeBacklog(events, account: devices[index].account, client: client)
            }
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 1000)
            let folds = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var folds = 0
                        while try await worker.foldNext() { folds += 1 }
                        return folds
                    }
                }
                return try await group.reduce(0, +)
            }
            // One fold per account: an account folded by two tasks would count twice here, and
            // its donations twice in its view.
            #expect(folds == devices.count)
            let store = ProjectionStore(client: client, logger: logger)
            for device in devices {
                #expect(try await store.head(account: device.account) == (20, 20))
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                    == AccountState(folding: backlogs[device.account]!).view(forDevice: device.deviceId))
            }
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }
}
