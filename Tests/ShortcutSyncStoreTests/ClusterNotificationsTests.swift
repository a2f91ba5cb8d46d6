import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// Every node's notifications as one sequence (`ClusterNotifications`, issue 57 item 2), the
/// nodes of a cluster named as `pg_dist_node` names them, and one PostgreSQL left as it was.
@Suite struct ClusterNotificationsTests {
    @Test func aNodeIsTheDatabaseOnThatServerWithTheSameCredentials() throws {
        let coordinator = try DatabaseURL("postgres://app:secret@10.0.0.1:5432/sync")
        let worker = try coordinator.onNode("10.0.0.2:6432")
        #expect((worker.host, worker.port, worker.username, worker.password, worker.database) == ("10.0.0.2", 6432, "app", "secret", "sync"))
        #expect(try coordinator.onNode("10.0.0.3").port == 5432)
        #expect(throws: DatabaseURL.ParseError.self) { try coordinator.onNode("10.0.0.2:port") }
        #expect(throws: DatabaseURL.ParseError.self) { try coordinator.onNode(":5432") }
        #expect(try DatabaseURL("postgres://app@localhost:5432/sync").isSameServer(as: DatabaseURL("postgres://app@127.0.0.1:5432/other")))
        #expect(!(try DatabaseURL("postgres://app@127.0.0.1:5433/sync").isSameServer(as: coordinator.onNode("127.0.0.1:5432"))))
        #expect(worker.nodeName == "10.0.0.2:6432")
    }

    /// On one PostgreSQL a service listens as it always did (one source on its URL), and a node
    /// other than its own server is refused as it starts.
    @Test func onOnePostgreSQLTheServiceListensOnItsDatabaseAndANodeIsRefused() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { _, url in
            #expect(try await url.citusNodes(logger: logger) == nil)
            let notifications = try await url.serviceNotifications(logger: logger)
            #expect(notifications is NotificationSource)
            await #expect(throws: DatabaseURL.NotACitusCluster.self) {
                _ = try await url.serviceNotifications(attachedTo: url.onNode("127.0.0.1:1"), logger: logger)
            }
        }
    }

    /// Routing accounts to the workers of their shards (`--route-by-account`) is refused on one
    /// PostgreSQL, with a message that says why, before any pool is made.
    @Test func routingByAccountIsRefusedOnOnePostgreSQL() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { client, url in
            let error = await #expect(throws: RoutingNeedsCitus.self) {
                _ = try await url.accountRouter(lookup: client, maximumConnections: 2, keptOpen: 0, logger: logger)
            }
            #expect(error?.description.contains("no citus extension") == true)
        }
    }

    /// The attached node's connection news pass as they are; another node's do not (its being
    /// away is not the database's), but it is named among the nodes not listened to, while the
    /// notifications of the nodes that listen arrive.
    @Test func anotherNodeAwayIsNamedAndTheAttachedNodesNotificationsArrive() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { client, url in
            // Nothing listens on port 1 of the loopback address: every attempt is refused at once.
            let nowhere = try url.onNode("127.0.0.1:1")
            let cluster = ClusterNotifications(
                attached: .init(name: url.nodeName, source: NotificationSource(.dedicated(try url.connectionConfiguration()), logger: logger)),
                others: [.init(name: nowhere.nodeName, source: NotificationSource(.dedicated(try nowhere.connectionConfiguration()), logger: logger))],
                logger: logger)
            #expect(cluster.nodesNotListening == [url.nodeName, "127.0.0.1:1"])
            let seen = SeenEvents()
            let signedOut = DeviceSignedOut(accountId: UUID(), deviceId: UUID())
            try await cluster.withEvents { events in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await event in events { seen.append(event) } }
                    try await eventually("the attached node listens", timeout: .seconds(60)) { cluster.nodesNotListening == ["127.0.0.1:1"] }
                    try await notify(signedOut, on: DeviceSignedOut.channel, client: client)
                    try await eventually("the sign-out arrives") { seen.all.contains(.deviceSignedOut(signedOut)) }
                    // The node away was tried (more than once by now) and said nothing to the listeners.
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(cluster.nodesNotListening == ["127.0.0.1:1"])
                    #expect(!seen.all.contains(.unreachable), "\(seen.all)")
                    #expect(seen.all.first == .connected)
                    group.cancelAll()
                }
            }
        }
    }
}
