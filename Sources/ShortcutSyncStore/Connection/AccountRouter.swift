import Foundation
import Logging
import PostgresNIO
import Synchronization

/// On a Citus cluster, the pool of the worker that holds each account's shards (issue 57, item 2):
/// a push's write and read and a pull's read and record are sent there whole, instead of to one
/// node that forwards the statements of every account whose shards are elsewhere (one more hop a
/// statement, and that node's CPU for it).
///
/// Which worker holds an account is asked once (`pg_dist_placement` through
/// `get_shard_id_for_distribution_column`, on the `lookup` pool: any node answers, Citus 11+ keeps
/// its metadata on each) and kept for `routeLifetime`, so that a shard moved by a rebalance is
/// followed within it. A route is only a shortcut: any node runs any account's statements, so an
/// account whose node cannot be asked, or whose node has no pool here (a worker added after the
/// server started), goes to `lookup`, which forwards as before. The routes kept are bounded
/// (`maximumRoutes`); past them all are forgotten at once, and asked again.
public final class AccountRouter: Sendable {
    /// The pools, one a worker that holds shards, by the node's name as `pg_dist_node` gives it.
    public let pools: [String: DatabasePool]
    private let lookup: DatabasePool
    private let logger: Logger
    private let routeLifetime: Duration
    private let maximumRoutes: Int
    private let routes = Mutex<[UUID: Route]>([:])
    private let nodes = Mutex(Nodes())

    /// Which workers are known to be away, and the requests using each one now.
    struct Nodes {
        var away: Set<String> = []
        var watching: [String: [ObjectIdentifier: NodeOutageWatch]] = [:]
    }

    struct Route {
        var node: String
        var asked: ContinuousClock.Instant
    }

    init(pools: [String: DatabasePool], lookup: DatabasePool, routeLifetime: Duration, maximumRoutes: Int, logger: Logger) {
        self.pools = pools
        self.lookup = lookup
        self.routeLifetime = routeLifetime
        self.maximumRoutes = maximumRoutes
        self.logger = logger
    }

    /// How many routes are kept now (for tests of their bound).
    public var routesKept: Int { routes.withLock { $0.count } }

    /// The pool of the node that holds the account's shards; `lookup` when that is not known, or
    /// when that node is away (its `LISTEN` lost: `node(_:listening:)`), so that Citus on the
    /// attached node answers for it (a lost worker's statements fail there at once, class 08).
    /// The request's `NodeOutageWatch`, if any, is told if the node is lost while it runs.
    public func pool(for account: UUID) async -> DatabasePool {
        let now = ContinuousClock.now
        let kept = routes.withLock { $0[account] }
        if let kept, now - kept.asked < routeLifetime {
            return watched(kept.node)
        }
        do {
            // The statement names the account only as the value whose shard is asked: it reads Citus's metadata.
            let rows = try await lookup.guardedQuery("""
                SELECT n.nodename, n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
                WHERE p.shardid = get_shard_id_for_distribution_column('account_heads', \(account))
                  AND n.isactive AND n.noderole = 'primary'
                LIMIT 1
                """, logger: logger)
            guard let (host, port) = try await rows.decode((String, Int32).self).collectAll().first else { return lookup }
            let node = "\(host):\(port)"
            // Past the bound every route goes (a bound on memory, not a cache policy to tune: each
            // is asked again once, one metadata read), the old table freed after the lock is let
            // go: nothing is sorted or walked under the lock on a request's path (issue 65, item 10).
            let dropped = routes.withLock { routes -> [UUID: Route] in
                var dropped: [UUID: Route] = [:]
                if routes.count >= maximumRoutes { swap(&dropped, &routes) }
                routes[account] = Route(node: node, asked: now)
                return dropped
            }
            _ = consume dropped
            return watched(node)
        } catch {
            logger.log(level: .debug, "the node of an account's shards could not be asked: its statements go to the attached node",
                       error: error, metadata: ["account": "\(account)"])
            return lookup
        }
    }

    /// The pool of `node`, with the current request's watch registered on it; `lookup` when the
    /// node has no pool here or is away. One lock: a watch registered before the node is lost is
    /// told of it (`node(_:listening:)`), and after it the node is not routed to.
    private func watched(_ node: String) -> DatabasePool {
        guard let pool = pools[node] else { return lookup }
        let watch = NodeOutageWatch.current
        let away = nodes.withLock { nodes -> Bool in
            guard !nodes.away.contains(node) else { return true }
            if let watch { nodes.watching[node, default: [:]][ObjectIdentifier(watch)] = watch }
            return false
        }
        if away { return lookup }
        if let watch {
            watch.registered { [weak self, id = ObjectIdentifier(watch)] in
                self?.nodes.withLock { _ = $0.watching[node]?.removeValue(forKey: id) }
            }
        }
        return pool
    }

    /// A node's `LISTEN` came into place (`listening`) or was lost (`ClusterNotifications.observeNodes`):
    /// a lost node is away, its requests under way are told (they end with `503`), and its
    /// accounts' statements go to `lookup` until it is back.
    public func node(_ node: String, listening: Bool) {
        let (changed, told) = nodes.withLock { nodes -> (Bool, [NodeOutageWatch]) in
            if listening { return (nodes.away.remove(node) != nil, []) }
            return (nodes.away.insert(node).inserted, Array((nodes.watching.removeValue(forKey: node) ?? [:]).values))
        }
        if changed, pools[node] != nil {
            if listening {
                logger.info("a worker is back: its accounts' statements go to it again", metadata: ["node": "\(node)"])
            } else {
                logger.warning("a worker is away: its accounts' statements go to the attached node until it is back",
                               metadata: ["node": "\(node)", "requests_ended": "\(told.count)"])
            }
        }
        for watch in told { watch.outage() }
    }
}

extension DatabaseURL {
    /// The router of a Citus cluster's accounts (`serve --route-by-account`): a pool of
    /// `maximumConnections` (`keptOpen` open from the start) on every worker of the cluster that
    /// holds shards of the accounts' tables, with this URL's user, password, database and TLS, and `lookup` for the
    /// routes. The caller runs the pools (each a `Service`). Refused on one PostgreSQL.
    public func accountRouter(lookup: DatabasePool, maximumConnections: Int, keptOpen: Int,
                              routeLifetime: Duration = .seconds(300), maximumRoutes: Int = 1_000_000,
                              logger: Logger) async throws -> AccountRouter {
        let nodes = try await withSingleConnection(logger: logger) { connection -> [(String, Int32)]? in
            guard try await connection.hasCitus(logger: logger) else { return nil }
            // Citus's own metadata, once at start: the nodes that hold shards of the accounts'
            // tables (`account_heads`' placements; every account table is colocated with it), not
            // those holding only reference tables' copies, as the coordinator does.
            return try await connection.guardedQuery("""
                SELECT n.nodename, n.nodeport FROM pg_dist_node n
                WHERE n.isactive AND n.noderole = 'primary'
                  AND EXISTS (SELECT 1 FROM pg_dist_placement p JOIN pg_dist_shard s ON s.shardid = p.shardid
                              WHERE p.groupid = n.groupid AND s.logicalrelid = 'account_heads'::regclass)
                ORDER BY n.groupid
                """, logger: logger).decode((String, Int32).self).collectAll()
        }
        guard let nodes else { throw RoutingNeedsCitus() }
        var pools: [String: DatabasePool] = [:]
        for (host, port) in nodes {
            var nodeLogger = logger
            nodeLogger[metadataKey: "node"] = "\(host):\(port)"
            pools["\(host):\(port)"] = try await onNode(host: host, port: Int(port))
                .servicePool(maximumConnections: maximumConnections, keptOpen: keptOpen, logger: nodeLogger)
        }
        return AccountRouter(pools: pools, lookup: lookup, routeLifetime: routeLifetime, maximumRoutes: maximumRoutes, logger: logger)
    }
}

/// `--route-by-account` was given, and the database is not a Citus cluster's.
public struct RoutingNeedsCitus: Error, CustomStringConvertible {
    public var description: String {
        "routing by account was asked for, but the database has no citus extension: accounts are routed to their nodes only on a Citus cluster"
    }
}
