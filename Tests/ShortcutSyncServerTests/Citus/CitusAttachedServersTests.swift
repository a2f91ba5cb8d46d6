import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// Servers attached to the workers of a Citus cluster (`serve --node`, issue 57 item 2): their
/// pushes and pulls run on the worker, the coordinator runs none of their statements, and every
/// server hears what the others announce on their own nodes (`ClusterNotifications`).
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusAttachedServersTests {
    /// A push through a server on one worker pokes a stream open on a server of the other worker.
    @Test func aPushThroughOneWorkerPokesAStreamOnTheOther() async throws {
        try await Self.withTwoServers { first, second in
            let account = try await first.createAccount()
            let phone = try await first.createDevice(accountToken: account.token)
            let mac = try await second.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let macStream = try await StreamTests.open(second, token: mac.token)
            #expect(macStream.status == .ok)
            let recorder = StreamRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await recorder.record(macStream) }
                #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                let version = try await phone.push()
                let pushed = ContinuousClock.now
                let received = try await recorder.wait(timeout: .seconds(5)) { $0.contains("event: changed") }
                let waited = ContinuousClock.now - pushed
                #expect(received.contains("event: changed\ndata: {\"version\": \(version)}"), "\(received)")
                #expect(waited < .seconds(2), "the poke came \(waited) after the push's answer")
                group.cancelAll()
            }
        }
    }

    /// A pull waiting on one worker's server is answered by a push through the other's.
    @Test func aPushThroughOneWorkerAnswersAPullWaitingOnTheOther() async throws {
        try await Self.withTwoServers { first, second in
            let account = try await first.createAccount()
            let phone = try await first.createDevice(accountToken: account.token)
            let created = try await first.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let mac = SimulatedDevice(id: created.id, token: created.token, client: second.client(token: created.token))
            try await mac.pull()
            async let waited = mac.pull(waitFor: 1)
            try await Task.sleep(for: .milliseconds(300))
            phone.record(EndToEndTests.donation("leek"), at: Int64(Date().timeIntervalSince1970 * 1000))
            let started = ContinuousClock.now
            try await phone.push()
            let answer = try await waited
            #expect(answer.shortcuts.upserted.count == 1)
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }

    /// A device signed out through one worker's server is refused by the other's within a second,
    /// though that server had its token cached from a request just before.
    @Test func aSignOutThroughOneWorkerIs401OnTheOtherWithinASecond() async throws {
        try await Self.withTwoServers { first, second in
            let account = try await first.createAccount()
            let created = try await first.createDevice(accountToken: account.token)
            #expect(try await second.raw(.GET, "/v1/sync/pull", token: created.token).status == 200)
            #expect(try await first.raw(.DELETE, "/v1/devices/\(created.id)", token: account.token).status == 204)
            let signedOut = ContinuousClock.now
            var status = 0
            while ContinuousClock.now - signedOut < .seconds(1) {
                status = try await second.raw(.GET, "/v1/sync/pull", token: created.token).status
                if status == 401 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(status == 401, "still \(status) on the other worker's server a second after the sign-out")
        }
    }

    /// With the server attached to a worker, the coordinator runs no statement of a sign-in, a
    /// push, a pull or a waiting pull (`pg_stat_statements` on the coordinator, reset after the
    /// server started), while the worker runs them.
    @Test func theCoordinatorRunsNoStatementOfAPushOrAPull() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let nodes = try Self.workerNodes(of: url)
            try await sql.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: { $0.node = nodes[0]; $0.runsWaker = false }) { server in
                try await Self.everyNodeListened(server)
                // Before the reset: a sign-in writes the reference table `devices`, whose copies are
                // on every node, the coordinator's included.
                let account = try await server.createAccount()
                let phone = try await server.createDevice(accountToken: account.token)
                try await Self.pushAndPullAfterResettingStatistics(phone, sql: sql, nodes: nodes)

                let onCoordinator = try await Self.serviceStatements(on: url)
                #expect(onCoordinator.isEmpty, "the coordinator ran: \(onCoordinator)")
                let onWorker = try await Self.serviceStatements(on: nodes[0])
                #expect(onWorker.contains { $0.contains("account_heads") }, "the worker ran no push: \(onWorker)")
            }
        }
    }

    /// A server that routes by account (`serve --route-by-account`, `AccountRouter`) sends an
    /// account's pushes, pulls and waiting pull to the worker that holds its shards: attached to
    /// the other worker, that worker runs none of their statements (no call forwarded through it),
    /// the coordinator none, and the holding worker all of them.
    @Test func aServerRoutingByAccountSendsEachAccountToTheWorkerOfItsShards() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let nodes = try Self.workerNodes(of: url)
            try await sql.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: {
                $0.node = nodes[0]
                $0.routesByAccount = true
                $0.runsWaker = false
            }) { server in
                try await Self.everyNodeListened(server)
                // An account whose shards are on the second worker, the one the server is not attached to.
                var held: (account: (id: UUID, token: String), port: Int)?
                for _ in 0..<32 where held?.port != nodes[1].port {
                    let account = try await server.createAccount()
                    let port = try await CitusCluster.node(ofAccount: account.id, client: sql)?.split(separator: ":").last.flatMap { Int($0) }
                    held = (account, port ?? 0)
                }
                let account = try #require(held?.port == nodes[1].port ? held?.account : nil, "no account of 32 had its shards on the second worker")
                let phone = try await server.createDevice(accountToken: account.token)
                try await Self.pushAndPullAfterResettingStatistics(phone, sql: sql, nodes: nodes)

                // The push's write and the pull's record are calls of distributed functions, which
                // name no table: a forwarded call shows as one on the node it passed through.
                let pushesAndPulls = "push_write|record_pull|account_heads|projection_|events"
                let onAttached = try await Self.statements(matching: pushesAndPulls, on: nodes[0])
                #expect(onAttached.isEmpty, "the attached worker ran (or forwarded): \(onAttached)")
                let onCoordinator = try await Self.statements(matching: pushesAndPulls, on: url)
                #expect(onCoordinator.isEmpty, "the coordinator ran: \(onCoordinator)")
                let onHolder = try await Self.statements(matching: pushesAndPulls, on: nodes[1])
                #expect(onHolder.contains { $0.contains("push_write") }, "the worker of the account's shards ran no push: \(onHolder)")
                #expect(onHolder.contains { $0.contains("record_pull") }, "the worker of the account's shards recorded no pull: \(onHolder)")
            }
        }
    }

    /// The router's own rules, step by step (`AccountRouter`): an account goes to the pool of the
    /// worker that holds its shards; when that worker's `LISTEN` is lost, the requests routed there
    /// are told at once (their `NodeOutageWatch`) and its accounts go to the attached node's
    /// pool; when it is back, to its own again. A watch whose request ended is told nothing.
    @Test func theRouterSendsAnAccountToItsWorkerAndToTheAttachedNodeWhileThatWorkerIsAway() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let logger = TestDatabase.shared.logger
            let router = try await url.accountRouter(lookup: sql, maximumConnections: 2, keptOpen: 0, logger: logger)
            #expect(router.pools.count == 2, "a pool on each worker: \(router.pools.keys.sorted())")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pool in router.pools.values { group.addTask { await pool.run() } }
                defer { group.cancelAll() }
                let account = UUID()
                let holder = try #require(try await CitusCluster.node(ofAccount: account, client: sql))
                let holderPool = try #require(router.pools[holder])

                let told = Mutex(0)
                let watch = NodeOutageWatch { told.withLock { $0 += 1 } }
                let routed = await NodeOutageWatch.$current.withValue(watch) { await router.pool(for: account) }
                #expect(routed === holderPool)
                // The statement runs there: the account's shard is that node's.
                #expect(try await routed.query("SELECT 1").decode(Int.self).collectAll() == [1])

                router.node(holder, listening: false)
                #expect(told.withLock { $0 } == 1, "the request routed to the lost worker is told")
                #expect(await router.pool(for: account) === sql, "while it is away, to the attached node")
                router.node(holder, listening: true)
                #expect(await router.pool(for: account) === holderPool, "back: to its worker again")

                // A request that ended is not told of a later loss.
                let ended = NodeOutageWatch { told.withLock { $0 += 10 } }
                _ = await NodeOutageWatch.$current.withValue(ended) { await router.pool(for: account) }
                ended.end()
                router.node(holder, listening: false)
                #expect(told.withLock { $0 } == 1)
                router.node(holder, listening: true)
            }
        }
    }

    /// Issue 66, item 4: the route is computed from the shard map, and it is Citus's: for 2,000
    /// ids the node the map gives is the node of `get_shard_id_for_distribution_column`'s shard,
    /// and the router sends each account to that node's pool. No table of accounts is kept.
    @Test func theShardMapPlacesEveryAccountAsCitusDoes() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let router = try await url.accountRouter(lookup: sql, maximumConnections: 2, keptOpen: 0,
                                                     logger: TestDatabase.shared.logger)
            let accounts = (0..<2_000).map { _ in UUID() }
            let placed = try await sql.query("""
                SELECT a.id, n.nodename || ':' || n.nodeport
                FROM unnest(\(accounts)::uuid[]) AS a(id)
                JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('account_heads', a.id)
                JOIN pg_dist_node n ON n.groupid = p.groupid
                """).decode((UUID, String).self).collectAll()
            #expect(placed.count == accounts.count)
            let citus = Dictionary(uniqueKeysWithValues: placed)
            let disagreeing = accounts.filter { router.node(for: $0) != citus[$0] }
            #expect(disagreeing.isEmpty, "\(disagreeing.count) of \(accounts.count) placed otherwise, the first \(disagreeing.prefix(3))")
            #expect(Set(citus.values).count == 2, "the ids fall on both workers")
            for account in accounts.prefix(20) {
                let routed = await router.pool(for: account)
                #expect(routed === router.pools[citus[account] ?? ""], "routed to the pool of its shards' worker")
            }
        }
    }

    /// The map follows a shard moved by a rebalance: once it is `mapLifetime` old, a request reads
    /// it again beside itself, and the accounts of the moved shard are routed to their new worker.
    @Test func theMapFollowsAMovedShard() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let router = try await url.accountRouter(lookup: sql, maximumConnections: 2, keptOpen: 0, mapLifetime: .milliseconds(200),
                                                     logger: TestDatabase.shared.logger)
            let account = UUID()
            let shard = try await sql.query("SELECT get_shard_id_for_distribution_column('account_heads', \(account))")
                .decode(Int64.self).collectAll().first ?? 0
            let before = try #require(router.node(for: account))
            let other = try #require(router.pools.keys.first { $0 != before })
            let (fromHost, fromPort) = (before.split(separator: ":")[0], Int32(before.split(separator: ":")[1]) ?? 0)
            let (toHost, toPort) = (other.split(separator: ":")[0], Int32(other.split(separator: ":")[1]) ?? 0)
            // Moved with its colocated shards, writes blocked while it is copied (no logical replication needed).
            _ = try await sql.query("""
                SELECT citus_move_shard_placement(\(shard), \(String(fromHost)), \(fromPort), \(String(toHost)), \(toPort), shard_transfer_mode => 'block_writes')
                """).collectAll()
            #expect(router.node(for: account) == before, "the map is not read on every request")
            let deadline = ContinuousClock.now + .seconds(10)
            while router.node(for: account) != other, ContinuousClock.now < deadline {
                _ = await router.pool(for: account)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(router.node(for: account) == other, "routed to the worker the shard moved to")
            #expect(await router.pool(for: account) === router.pools[other])
        }
    }

    /// A server that loses one node's `LISTEN` (the node stopped) says so on `/readyz`, listens
    /// again once the node is back, and then hears what is announced there: a sign-out through a
    /// server of that node is 401 on it within a second.
    @Test func aLostNodesListenIsReportedAndResumed() async throws {
        let cluster = try CitusCluster.required()
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let nodes = try Self.workerNodes(of: url)
            try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: { $0.node = nodes[0] }) { server in
                try await Self.everyNodeListened(server)
                let account = try await server.createAccount()
                let created = try await server.createDevice(accountToken: account.token)

                try await cluster.stopWorkerImmediately(1)
                do {
                    try await eventually("/readyz names the stopped node", timeout: .seconds(10)) {
                        let ready = try await server.operators("/readyz")
                        return ready.json["nodesNotListening"] as? [String] == [nodes[1].nodeName] && ready.json["degraded"] as? Bool == true
                    }
                } catch {
                    try await cluster.startWorker(1)
                    throw error
                }
                try await cluster.startWorker(1)
                try await Self.everyNodeListened(server)

                #expect(try await server.raw(.GET, "/v1/sync/pull", token: created.token).status == 200)
                try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: { $0.node = nodes[1]; $0.runsWaker = false }) { other in
                    let answer = try await other.raw(.DELETE, "/v1/devices/\(created.id)", token: account.token)
                    #expect(answer.status == 204)
                }
                let signedOut = ContinuousClock.now
                var status = 0
                while ContinuousClock.now - signedOut < .seconds(1) {
                    status = try await server.raw(.GET, "/v1/sync/pull", token: created.token).status
                    if status == 401 { break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(status == 401, "still \(status) a second after a sign-out on the node that came back")
            }
        }
    }

    /// A `worker` process attached to a worker (`worker --node`) folds an account behind (an
    /// import's events) from there: the maintenance queue's read of every shard and the fold's
    /// statements run on a worker as on the coordinator.
    @Test func aWorkerProcessOnAWorkerFoldsAnAccountBehind() async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let nodes = try Self.workerNodes(of: url)
            try await TestServer.with(database: url, sql: sql, runsWorker: false) { server in
                let account = try await server.createAccount()
                var tablet = DeviceScript(account: account.id)
                let millis = Int64(Date().timeIntervalSince1970 * 1000)
                try await writeBacklog((0..<5).map { tablet.donate("backlog-\($0)", at: millis + Int64($0)) }, account: account.id, client: sql)
                let logger = TestDatabase.shared.logger
                let services = try await buildWorkerServices(database: url, node: nodes[1], tasks: 1, apns: nil, wake: WakeConfiguration(), logger: logger)
                let group = ServiceGroup(services: services, gracefulShutdownSignals: [], logger: logger)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    defer { tasks.cancelAll() }
                    try await eventually("the account is folded by the worker process") {
                        try await sql.query("SELECT version = folded_version FROM account_heads WHERE account_id = \(account.id)")
                            .decode(Bool.self).collectAll() == [true]
                    }
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
        }
    }

    // MARK: Helpers

    /// Two services on a fresh database of the cluster, the first attached to the first worker,
    /// the second to the second, each listening on every node before `body` runs.
    static func withTwoServers(_ body: (TestServer, TestServer) async throws -> Void) async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            let nodes = try workerNodes(of: url)
            try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: { $0.node = nodes[0] }) { first in
                try await TestServer.with(database: url, sql: sql, runsWorker: false, configure: { $0.node = nodes[1]; $0.runsWaker = false }) { second in
                    try await everyNodeListened(first)
                    try await everyNodeListened(second)
                    try await body(first, second)
                }
            }
        }
    }

    /// The database at `url` (the coordinator's) on each worker of the suite's cluster.
    static func workerNodes(of url: DatabaseURL) throws -> [DatabaseURL] {
        try CitusCluster.required().workers.map { try url.onNode(DatabaseURL($0.url(database: url.database)).nodeName) }
    }

    /// Waits until the server's `LISTEN` is in place on every node (`/readyz` names none).
    static func everyNodeListened(_ server: TestServer) async throws {
        try await eventually("the server listens on every node", timeout: .seconds(15)) {
            let ready = try await server.operators("/readyz")
            return ready.status == 200 && ready.json["nodesNotListening"] == nil
        }
    }

    /// Resets `pg_stat_statements` on the coordinator (`sql`) and on every worker, then has
    /// `phone` push a donation, pull twice and wait in a pull that a second push answers.
    static func pushAndPullAfterResettingStatistics(_ phone: SimulatedDevice, sql: PostgresClient, nodes: [DatabaseURL]) async throws {
        try await sql.query("SELECT pg_stat_statements_reset()")
        for node in nodes {
            try await node.withSingleConnection(logger: TestDatabase.shared.logger) { try await $0.query("SELECT pg_stat_statements_reset()", logger: TestDatabase.shared.logger) }
        }
        phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
        let version = try await phone.push()
        try await phone.pull()
        try await phone.pull()
        phone.record(EndToEndTests.donation("leek"), at: Int64(Date().timeIntervalSince1970 * 1000))
        async let waited = phone.pull(waitFor: version + 1)
        try await Task.sleep(for: .milliseconds(200))
        try await phone.push()
        #expect(try await waited.shortcuts.upserted.count == 1)
    }

    /// The statements matching the regular expression `pattern` that the node of `url` ran in
    /// its database since `pg_stat_statements` was reset there, with their calls.
    static func statements(matching pattern: String, on url: DatabaseURL) async throws -> [String] {
        try await url.withSingleConnection(logger: TestDatabase.shared.logger) { connection in
            try await connection.query("""
            SELECT calls::text || ' × ' || query FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND query ~ \(pattern) AND query !~ 'pg_stat_statements'
            ORDER BY calls DESC
            """, logger: TestDatabase.shared.logger).decode(String.self).collectAll()
        }
    }

    /// The statements on the service's tables that the node of `url` ran in its database since
    /// `pg_stat_statements` was reset there, with their calls.
    static func serviceStatements(on url: DatabaseURL) async throws -> [String] {
        try await url.withSingleConnection(logger: TestDatabase.shared.logger) { connection in
            try await connection.query("""
            SELECT calls::text || ' × ' || query FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND query ~ '(events|account_heads|projection_|devices|accounts|device_sync|push_tokens)'
              AND query !~ 'pg_stat_statements'
            ORDER BY calls DESC
            """, logger: TestDatabase.shared.logger).decode(String.self).collectAll()
        }
    }
}
