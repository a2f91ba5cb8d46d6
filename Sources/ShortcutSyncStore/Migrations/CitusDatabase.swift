import Foundation
import Logging
import PostgresNIO

/// A database on every node of a Citus cluster, ready for `Migrator`: made on each node with the
/// extension and the password the nodes share (`pg_dist_authinfo`, for Citus's connections
/// between them), then the coordinator told where it is and the workers added. What an operator
/// does by hand before `migrate` (docs/citus.md); the tests' cluster and `bench citus` do it on
/// the nodes they start (`CitusNodes`).
public enum CitusDatabase {
    /// Makes `name` on the coordinator and every worker (each given by a URL of any of its
    /// databases, on loopback or where the other nodes reach it) and returns the coordinator's
    /// URL of it. The tables are `Migrator`'s to make and distribute.
    public static func create(_ name: String, coordinator: DatabaseURL, workers: [DatabaseURL], password: String,
                              logger: Logger) async throws -> DatabaseURL {
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        for node in [coordinator] + workers {
            try await node.with(database: "postgres").withSingleConnection(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(quoted)"), logger: logger)
            }
            try await node.with(database: name).withSingleConnection(logger: logger) { connection in
                try await connection.query("CREATE EXTENSION citus", logger: logger)
                // nodeid 0: for the connections to every node.
                try await connection.query("""
                    INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo) VALUES (0, \(node.username), \("password=" + conninfoValue(password)))
                    """, logger: logger)
            }
        }
        let url = coordinator.with(database: name)
        try await url.withSingleConnection(logger: logger) { connection in
            try await connection.query("SELECT citus_set_coordinator_host(\(coordinator.host), \(coordinator.port)::int4)", logger: logger)
            for worker in workers {
                try await connection.query("SELECT citus_add_node(\(worker.host), \(worker.port)::int4)", logger: logger)
            }
        }
        return url
    }

    /// `value` as a value of a libpq connection string (`authinfo` is one): in single quotes,
    /// each backslash and single quote in it escaped with a backslash, so that a password with
    /// a space, a quote or a backslash is read whole and nothing after it is read as a keyword.
    static func conninfoValue(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
