import Foundation
import PostgresNIO

extension ProjectionStore {
    /// The nodes of a Citus cluster that do not answer the node this service talks to, each as
    /// `host:port` (issue 57): the accounts whose shards they hold are answered `503` until they
    /// are back, the others are served. Empty on one PostgreSQL, and while every node answers.
    ///
    /// Each node is asked with Citus's own probe (`citus_check_connection_to_node`), at most a
    /// second each (`citus.node_connection_timeout`), in a transaction of its own so that the
    /// setting ends with it: a node that does not answer (stopped, or its machine gone) costs
    /// `/readyz` at most that, and its reading is kept a second whoever asks (`RecentValue`).
    public func nodesAway() async throws -> [String] {
        try await client.withConnection { connection in
            guard try await connection.hasCitus(logger: logger) else { return [] }
            return try await connection.inTransaction(logger: logger) { connection in
                try await connection.guardedQuery("SET LOCAL citus.node_connection_timeout = 1000", logger: logger)
                return try await connection.guardedQuery("""
                    SELECT n.nodename || ':' || n.nodeport FROM pg_dist_node n
                    WHERE n.noderole = 'primary' AND n.isactive AND NOT citus_check_connection_to_node(n.nodename, n.nodeport)
                    ORDER BY n.nodeid
                    """, logger: logger).decode(String.self).collectAll()
            }
        }
    }
}
