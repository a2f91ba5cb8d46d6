import Foundation
import Logging
import PostgresNIO
import Synchronization

/// On a Citus cluster, the pool of the worker that holds each account's shards (issue 57, item 2):
/// a push's write and read and a pull's read and record are sent there whole, instead of to one
/// node that forwards the statements of every account whose shards are elsewhere (one more hop a
/// statement, and that node's CPU for it).
///
/// Which worker holds an account is computed here, from the cluster's shard map (`ShardMap`:
/// `account_heads`' hash ranges and their placements, a few dozen rows read on the `lookup`
/// pool), as Citus computes it (issue 66, item 4): no statement a request, and no table of
/// accounts. The map is read again in the background once it is `mapLifetime` old, so that a
/// shard moved by a rebalance is followed within it. A route is only a shortcut: any node runs
/// any account's statements, so an account whose node is not known (the map could not be read,
/// or is read in the middle of a change), or whose node has no pool here (a worker added after
/// the server started), goes to `lookup`, which forwards as before.
public final class AccountRouter: Sendable {
    /// The pools, one a worker that holds shards, by the node's name as `pg_dist_node` gives it.
    public let pools: [String: DatabasePool]
    private let lookup: DatabasePool
    private let logger: Logger
    private let mapLifetime: Duration
    private let map: Mutex<MapState>
    private let nodes = Mutex(Nodes())

    /// Which workers are known to be away, and the requests using each one now.
    struct Nodes {
        var away: Set<String> = []
        var watching: [String: [ObjectIdentifier: NodeOutageWatch]] = [:]
    }

    /// The shard map, when it was read (or last tried), and whether a reading is under way.
    struct MapState {
        var map: ShardMap?
        var read: ContinuousClock.Instant
        var reading = false
    }

    init(pools: [String: DatabasePool], lookup: DatabasePool, map: ShardMap?, mapLifetime: Duration, logger: Logger) {
        self.pools = pools
        self.lookup = lookup
        self.mapLifetime = mapLifetime
        self.map = Mutex(MapState(map: map, read: .now))
        self.logger = logger
    }

    /// The node that holds the account's shards, by the map as it is now (nil when not known).
    public func node(for account: UUID) -> String? {
        map.withLock { $0.map }?.node(for: account)
    }

    /// The pool of the node that holds the account's shards; `lookup` when that is not known, or
    /// when that node is away (its `LISTEN` lost: `node(_:listening:)`), so that Citus on the
    /// attached node answers for it (a lost worker's statements fail there at once, class 08).
    /// The request's `NodeOutageWatch`, if any, is told if the node is lost while it runs.
    /// Computed from the map; a map past its lifetime is read again beside the request, never
    /// in its way.
    public func pool(for account: UUID) async -> DatabasePool {
        let now = ContinuousClock.now
        let (current, due) = map.withLock { state -> (ShardMap?, Bool) in
            let due = !state.reading && (state.map == nil || now - state.read >= mapLifetime)
            if due { state.reading = true }
            return (state.map, due)
        }
        if due { Task { await self.readMapAgain() } }
        guard let node = current?.node(for: account) else { return lookup }
        return watched(node)
    }

    /// Reads the shard map again; a reading that fails keeps the map there was (tried again
    /// after `mapLifetime`, or at the next request when there was none).
    private func readMapAgain() async {
        do {
            let read = try await ShardMap.read(on: lookup, logger: logger)
            map.withLock { $0 = MapState(map: read, read: .now) }
        } catch {
            logger.log(level: .debug, "the cluster's shard map could not be read again: the one there was is kept", error: error)
            map.withLock { state in
                state.reading = false
                state.read = .now
            }
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
    /// holds shards of the accounts' tables, with this URL's user, password, database and TLS, and `lookup` to
    /// read the shard map on. The caller runs the pools (each a `Service`). Refused on one PostgreSQL.
    public func accountRouter(lookup: DatabasePool, maximumConnections: Int, keptOpen: Int,
                              mapLifetime: Duration = .seconds(30),
                              logger: Logger) async throws -> AccountRouter {
        // The map is read here, on this one connection: the pools made below (`lookup` among them)
        // answer nothing until the caller runs them.
        let shards = try await withSingleConnection(logger: logger) { connection -> [(Int32, Int32, String, Int32)]? in
            guard try await connection.hasCitus(logger: logger) else { return nil }
            return try await connection.guardedQuery(ShardMap.query, logger: logger).decode((Int32, Int32, String, Int32).self).collectAll()
        }
        guard let shards else { throw RoutingNeedsCitus() }
        let map = ShardMap(rows: shards)
        // A pool on each node the map names: the nodes that hold shards of the accounts' tables
        // (every account table is colocated with `account_heads`), not those holding only
        // reference tables' copies, as the coordinator does.
        var nodes: [(String, Int32)] = []
        for (_, _, host, port) in shards where !nodes.contains(where: { $0 == (host, port) }) { nodes.append((host, port)) }
        var pools: [String: DatabasePool] = [:]
        for (host, port) in nodes {
            var nodeLogger = logger
            nodeLogger[metadataKey: "node"] = "\(host):\(port)"
            pools["\(host):\(port)"] = try await onNode(host: host, port: Int(port))
                .servicePool(maximumConnections: maximumConnections, keptOpen: keptOpen, logger: nodeLogger)
        }
        return AccountRouter(pools: pools, lookup: lookup, map: map, mapLifetime: mapLifetime, logger: logger)
    }
}

/// `--route-by-account` was given, and the database is not a Citus cluster's.
public struct RoutingNeedsCitus: Error, CustomStringConvertible {
    public var description: String {
        "routing by account was asked for, but the database has no citus extension: accounts are routed to their nodes only on a Citus cluster"
    }
}

extension ShardMap {
    /// The shard map of `account_heads` (every account table is colocated with it), from Citus's
    /// metadata: any node answers, Citus 11+ keeps it on each. The statement reads no account's rows.
    static let query: PostgresQuery = """
        SELECT s.shardminvalue::int4, s.shardmaxvalue::int4, n.nodename, n.nodeport
        FROM pg_dist_shard s JOIN pg_dist_placement p ON p.shardid = s.shardid JOIN pg_dist_node n ON n.groupid = p.groupid
        WHERE s.logicalrelid = 'account_heads'::regclass AND n.isactive AND n.noderole = 'primary'
        """

    init(rows: [(Int32, Int32, String, Int32)]) {
        self.init(shards: rows.map { Shard(lowest: $0.0, highest: $0.1, node: "\($0.2):\($0.3)") })
    }

    /// The map read on a running pool (the router's reading again).
    static func read(on pool: DatabasePool, logger: Logger) async throws -> ShardMap {
        let rows = try await pool.guardedQuery(query, logger: logger)
        return ShardMap(rows: try await rows.decode((Int32, Int32, String, Int32).self).collectAll())
    }
}
