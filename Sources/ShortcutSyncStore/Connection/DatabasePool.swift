import Logging
import PostgresNIO

/// The connections to the database that a process's stores share: PostgresNIO's pool, itself a
/// `Service` that runs in the process's service group.
///
/// The other modules hold it and hand it to the stores, and never query it: they do not depend on
/// PostgresNIO, so its methods are not visible to them (`MemberImportVisibility`). Only this
/// module speaks PostgreSQL.
public typealias DatabasePool = PostgresClient

extension DatabaseURL {
    /// A pool for a service that runs for long (`serviceClientConfiguration`: generic plans where
    /// they serve, `keptOpen` connections open from the start, no keep-alive queries).
    public func servicePool(maximumConnections: Int, keptOpen: Int, logger: Logger) async throws -> DatabasePool {
        PostgresClient(configuration: try await serviceClientConfiguration(maximumConnections: maximumConnections, keptOpen: keptOpen, logger: logger),
                       backgroundLogger: logger)
    }

    /// A pool for a command that runs a few statements and ends (`admin`).
    public func commandPool(maximumConnections: Int, logger: Logger) throws -> DatabasePool {
        PostgresClient(configuration: try clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: logger)
    }

    /// The database's notifications on `channels`, each attempt to listen on a connection of its
    /// own (never one of a pool's), for a service that listens as long as it runs.
    public func notificationSource(channels: Set<NotificationSource.Channel> = Set(NotificationSource.Channel.allCases),
                                   logger: Logger) throws -> NotificationSource {
        NotificationSource(.dedicated(try connectionConfiguration()), channels: channels, logger: logger)
    }

    /// The database's notifications for a service that listens as long as it runs, on one
    /// connection of its own per node: on one PostgreSQL this URL's (`notificationSource`, as
    /// ever); on a Citus cluster every node's (`ClusterNotifications`, the nodes read from
    /// `pg_dist_node`), since a `NOTIFY` is heard only on the node that ran it. `node`: the node
    /// the service's pool talks to (`--node-url`), whose connection's news are the database's
    /// reach to the service; this URL (the coordinator) without one. The nodes are asked of it
    /// first, then of this URL; where neither answers (the database is away as the service
    /// starts) the service listens on it and this URL only, and says so (without a node: on this
    /// URL, as on one PostgreSQL). On a cluster the nodes are read again every
    /// `nodesRereadInterval`: a worker added is listened to, one removed no longer.
    public func serviceNotifications(attachedTo node: DatabaseURL? = nil,
                                     channels: Set<NotificationSource.Channel> = Set(NotificationSource.Channel.allCases),
                                     nodesRereadInterval: Duration = .seconds(30),
                                     logger: Logger) async throws -> any NotificationEvents {
        let attached = node ?? self
        var nodes: [DatabaseURL]??
        for asked in node == nil ? [self] : [attached, self] where nodes == nil {
            do {
                nodes = .some(try await asked.citusNodes(logger: logger))
            } catch {
                logger.log(level: .warning, "could not read the cluster's nodes from \(asked.nodeName)", error: error)
            }
        }
        let listened: [DatabaseURL]
        switch nodes {
        case .some(.some(let cluster)):
            listened = cluster
        case .some(.none):
            guard attached.isSameServer(as: self) else { throw NotACitusCluster(node: attached.nodeName) }
            return try notificationSource(channels: channels, logger: logger)
        case .none:
            guard node != nil else { return try notificationSource(channels: channels, logger: logger) }
            listened = [self]
            logger.warning("listening on the attached node and the database URL's only: the cluster's nodes could not be read",
                           metadata: ["node": "\(attached.nodeName)"])
        }
        @Sendable func source(_ url: DatabaseURL) throws -> ClusterNotifications.Node {
            var nodeLogger = logger
            nodeLogger[metadataKey: "node"] = "\(url.nodeName)"
            return .init(name: url.nodeName, source: NotificationSource(.dedicated(try url.connectionConfiguration()), channels: channels, logger: nodeLogger))
        }
        let others = listened.filter { !$0.isSameServer(as: attached) }
        // Read again as the service runs, of the attached node first, as at start.
        let discovery = ClusterNotifications.Discovery(interval: nodesRereadInterval) { [self] in
            var nodes: [DatabaseURL]?
            do {
                nodes = try await attached.citusNodes(logger: logger)
            } catch where node != nil {
                nodes = try await citusNodes(logger: logger)
            }
            return try (nodes ?? []).filter { !$0.isSameServer(as: attached) }.map(source)
        }
        return ClusterNotifications(attached: try source(attached), others: try others.map(source), discovery: discovery, logger: logger)
    }

    /// A node (`--node-url`) other than the database URL's server was given, and the database is
    /// not a Citus cluster's.
    public struct NotACitusCluster: Error, CustomStringConvertible {
        public var node: String
        public var description: String {
            "the node \(node) was given beside the database URL, but the database has no citus extension: a node is given only on a Citus cluster"
        }
    }
}
