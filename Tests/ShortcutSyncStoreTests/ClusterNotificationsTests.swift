import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
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

    /// Issue 65, item 9: the nodes are read again as the service runs. A node that joins is
    /// listened to, and counts as a `LISTEN` resumed (what it notified before was missed); one
    /// that leaves is no longer listened to. (The node that joins is the same server through a
    /// proxy, under another name: two `LISTEN` sessions on it.)
    @Test func aNodeThatJoinsIsListenedToAndOneThatLeavesIsNot() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { client, url in
            let proxy = try await NetworkFaultProxy(forwardingTo: url.host, port: url.port)
            defer { Task { await proxy.stop() } }
            let joining = try url.onNode("127.0.0.1:\(proxy.port)")
            let cluster_ = Mutex<[DatabaseURL]>([])
            let cluster = ClusterNotifications(
                attached: .init(name: url.nodeName, source: NotificationSource(.dedicated(try url.connectionConfiguration()), logger: logger)),
                others: [],
                discovery: .init(interval: .milliseconds(100)) {
                    try cluster_.withLock { $0 }.map { .init(name: $0.nodeName, source: NotificationSource(.dedicated(try $0.connectionConfiguration()), logger: logger)) }
                },
                logger: logger)
            func listenSessions() async throws -> Int64? {
                try await client.query(PostgresQuery(unsafeSQL: """
                    SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND \(ListenSession.predicate)
                    """)).decode(Int64.self).collectAll().first
            }
            let seen = SeenEvents()
            try await cluster.withEvents { events in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await event in events { seen.append(event) } }
                    try await eventually("the attached node listens", timeout: .seconds(60)) { cluster.nodesNotListening.isEmpty }
                    #expect(cluster.nodeNames == [url.nodeName])
                    #expect(!seen.all.contains(.listening(resumed: true)))

                    cluster_.withLock { $0 = [url, joining] }
                    try await eventually("the node that joined is listened to", timeout: .seconds(60)) {
                        cluster.nodeNames == [url.nodeName, joining.nodeName] && cluster.nodesNotListening.isEmpty
                    }
                    try await eventually("its first LISTEN counts as resumed") { seen.all.contains(.listening(resumed: true)) }
                    try await eventually("two sessions listen") { try await listenSessions() == 2 }

                    cluster_.withLock { $0 = [url] }
                    try await eventually("the node that left is not listened to", timeout: .seconds(30)) {
                        let sessions = try await listenSessions()
                        return cluster.nodeNames == [url.nodeName] && sessions == 1
                    }
                    let signedOut = DeviceSignedOut(accountId: UUID(), deviceId: UUID())
                    try await notify(signedOut, on: DeviceSignedOut.channel, client: client)
                    try await eventually("the attached node still passes its notifications") { seen.all.contains(.deviceSignedOut(signedOut)) }
                    group.cancelAll()
                }
            }
        }
    }
}
