import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncAdmin
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWake
import Testing

/// The composition root's builders of the `worker` and `admin` processes, called as their
/// commands call them (`serve`'s `buildApplication` runs under every `TestServer`).
@Suite struct ProcessBuilderTests {
    /// `buildWorkerServices` runs maintenance tasks that fold an account behind its head, on a
    /// pool of their own, and stops with its service group.
    @Test func aWorkerProcessFoldsAnAccountBehind() async throws {
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            var phone = DeviceScript(account: UUID(), detail: .full)
            let events = (0..<5).map { phone.donate("soup-\($0)", at: 100 + Int64($0)) }
            try await Migrator.migrate(url, logger: logger)
            try await writeBacklog(events, account: phone.account, client: client)
            let store = ProjectionStore(client: client, logger: logger)
            #expect(try await store.head(account: phone.account) == (5, 0))

            let services = try await buildWorkerServices(database: url, tasks: 2, apns: nil, wake: .init(), logger: logger)
            let group = ServiceGroup(services: services, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await eventually("the worker folded the account") {
                    try await store.head(account: phone.account) == (5, 5)
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(try await store.fullView(account: phone.account, device: phone.deviceId)
                == AccountState(folding: events).view(forDevice: phone.deviceId))
        }
    }

    /// `withOperator` gives the admin commands an `Operator` on the database, and closes its
    /// pool when they end.
    @Test func anOperatorSeesTheAccounts() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let listed = try await withOperator(database: server.database, logger: TestDatabase.shared.logger) { admin in
                try await admin.accounts().accounts.map(\.accountId)
            }
            #expect(listed.contains(account.id))
        }
    }
}
