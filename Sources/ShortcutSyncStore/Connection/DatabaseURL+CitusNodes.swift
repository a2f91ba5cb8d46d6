import Foundation
import Logging
import PostgresNIO

extension DatabaseURL {
    /// On a Citus cluster, every active node (`pg_dist_node`: the coordinator, where
    /// `citus_set_coordinator_host` named it, and the workers) as a URL of this database with this
    /// URL's user, password and TLS, ordered by group; nil when the database has no citus
    /// extension (one PostgreSQL). Asked of the node this URL names (any node will do: Citus 11+
    /// syncs its metadata to every one). Each node is named as the cluster names it, so the
    /// server must reach the nodes by the names the nodes reach each other by.
    public func citusNodes(logger: Logger) async throws -> [DatabaseURL]? {
        let rows = try await withSingleConnection(logger: logger) { connection -> [(String, Int32)]? in
            guard try await connection.hasCitus(logger: logger) else { return nil }
            return try await connection.guardedQuery("""
                SELECT nodename, nodeport FROM pg_dist_node WHERE isactive AND noderole = 'primary' ORDER BY groupid, nodeid
                """, logger: logger).decode((String, Int32).self).collectAll()
        }
        guard let rows else { return nil }
        var nodes = rows.map { onNode(host: $0.0, port: Int($0.1)) }
        // A coordinator that was never named (no citus_set_coordinator_host) is not a row.
        if !nodes.contains(where: { $0.isSameServer(as: self) }) { nodes.insert(self, at: 0) }
        return nodes
    }

    /// This database on the node `name` (`host:port`, as `pg_dist_node` names it; the port 5432
    /// when left out), with the same user, password and TLS: the node a server is attached to
    /// (`serve --node`).
    public func onNode(_ name: String) throws -> DatabaseURL {
        var host = Substring(name), port = 5432
        if let colon = name.lastIndex(of: ":"), !name.hasSuffix("]") {
            guard let given = Int(name[name.index(after: colon)...]), (1...65_535).contains(given) else {
                throw ParseError.invalid("a node is host:port, not '\(name)'")
            }
            host = name[..<colon]
            port = given
        }
        guard !host.isEmpty else { throw ParseError.invalid("a node is host:port, not '\(name)'") }
        return onNode(host: String(host), port: port)
    }

    /// This database on the server at `host:port`, with the same user, password and TLS; this URL
    /// itself when it names that server (over its Unix socket, say).
    func onNode(host: String, port: Int) -> DatabaseURL {
        var node = self
        node.host = host
        node.port = port
        node.socketDirectory = nil
        return node.isSameServer(as: self) ? self : node
    }

    /// Whether the two URLs name one server: the same port, and the same host or both loopback
    /// (a Unix socket counting as loopback).
    public func isSameServer(as other: DatabaseURL) -> Bool {
        guard port == other.port else { return false }
        if socketDirectory != nil || other.socketDirectory != nil {
            return socketDirectory == other.socketDirectory || (isLoopback && other.isLoopback)
        }
        return host.lowercased() == other.host.lowercased() || (isLoopback && other.isLoopback)
    }

    /// Whether the server is on this machine: a Unix socket, or a loopback name or address.
    private var isLoopback: Bool {
        socketDirectory != nil || ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
    }

    /// The server as `host:port`, as `pg_dist_node` and `/readyz` name a node.
    public var nodeName: String { "\(host):\(port)" }
}
