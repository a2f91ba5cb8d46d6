import Foundation
import Logging
import PostgresNIO

/// Applies the migrations that a database has not seen yet, each in its own transaction.
///
/// An advisory lock makes several processes starting at once apply each migration once.
public struct Migrator: Sendable {
    static let lockKey: Int64 = 0x5353_4D49_4752  // "SSMIGR"

    public let client: PostgresClient
    public let logger: Logger
    public let migrations: [Migration]

    public init(client: PostgresClient, logger: Logger, migrations: [Migration]? = nil) throws {
        self.client = client
        self.logger = logger
        self.migrations = try migrations ?? Migration.bundled()
    }

    /// Applies what the database at `url` is missing, over a connection of its own (not a pool,
    /// whose first lease could come before its `run()`), closed afterwards.
    @discardableResult
    public static func migrate(_ url: DatabaseURL, logger: Logger) async throws -> [Int] {
        let migrations = try Migration.bundled()
        return try await url.withSingleConnection(logger: logger) { connection in
            try await migrate(migrations, on: connection, logger: logger)
        }
    }

    /// Applies what is missing, over a connection of the running pool; returns the versions it applied.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await client.withConnection { connection in
            try await Self.migrate(migrations, on: connection, logger: logger)
        }
    }

    /// Applies what `connection`'s database is missing of `migrations`, under the advisory lock.
    ///
    /// A migration runs as long as it takes (an index built on a large table, another process's
    /// migration waited for under the lock): the session's time limits are lifted for it, and set
    /// back after, since a service's pooled connection goes back to its requests
    /// (`SessionLimits`).
    private static func migrate(_ migrations: [Migration], on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await SessionLimits.withStatementDeadline(nil) {
            try await connection.guardedQuery("SET statement_timeout = 0", logger: logger)
            try await connection.guardedQuery("SET lock_timeout = 0", logger: logger)
            do {
                try await connection.guardedQuery("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
                let applied = try await apply(migrations, on: connection, logger: logger)
                try await distributeIfCitus(on: connection, logger: logger)
                try await connection.guardedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                try await connection.guardedQuery("RESET statement_timeout", logger: logger)
                try await connection.guardedQuery("RESET lock_timeout", logger: logger)
                return applied
            } catch {
                _ = try? await connection.guardedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                _ = try? await connection.guardedQuery("RESET statement_timeout", logger: logger)
                _ = try? await connection.guardedQuery("RESET lock_timeout", logger: logger)
                throw error
            }
        }
    }

    private static func apply(_ migrations: [Migration], on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.guardedQuery("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        let done = try await Set(connection.guardedQuery("SELECT version FROM schema_migrations", logger: logger)
            .decode(Int.self).collectAll())
        var applied: [Int] = []
        for migration in migrations where !done.contains(migration.version) {
            logger.debug("applying migration", metadata: ["migration": "\(migration.name)"])
            try await connection.inTransaction(logger: logger) { connection in
                for statement in SQLScript.statements(in: migration.sql) {
                    try await connection.guardedQuery(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.guardedQuery(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
            }
            applied.append(migration.version)
        }
        // One line for what was applied; each migration's own is at debug level.
        if let first = applied.first, let last = applied.last {
            logger.info("schema migrated", metadata: [
                "applied": "\(applied.count)", "from": "\(first)", "to": "\(last)",
            ])
        } else {
            logger.debug("schema is current", metadata: ["version": "\(migrations.last?.version ?? 0)"])
        }
        return applied
    }

    /// On a Citus coordinator (the database has the citus extension), distributes what the
    /// migrations made and is not distributed yet: `Schema/citus/distribute.sql`, statement by
    /// statement outside a transaction as psql would run it, on every migrate (each of its steps
    /// is skipped once done), so that a table a later migration adds is distributed by the one
    /// command an operator runs on one node too. Nothing happens on a PostgreSQL without Citus, nor
    /// before the database has every migration of this build.
    private static func distributeIfCitus(on connection: PostgresConnection, logger: Logger) async throws {
        guard try await connection.hasCitus(logger: logger) else { return }
        // The script is written for this build's schema: a database migrated only part of the
        // way (an upgrade test's older schema) is distributed once it has every migration.
        let applied = Set(try await connection.guardedQuery("SELECT version FROM schema_migrations", logger: logger)
            .decode(Int.self).collectAll())
        guard try Migration.bundled().allSatisfy({ applied.contains($0.version) }) else {
            logger.info("the database has Citus but not yet this build's whole schema: its tables are distributed once it has")
            return
        }
        logger.info("the database has Citus: distributing its tables (Schema/citus/distribute.sql)")
        for statement in SQLScript.statements(in: try Migration.citusDistribution()) {
            try await connection.guardedQuery(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        // The push's write and the pull's record as calls that Citus sends whole to the account's worker.
        try await DistributedFunctions.install(on: connection, logger: logger)
    }

    /// The versions the database has applied, or nil when it has never been migrated.
    public func appliedVersions() async throws -> [Int]? {
        let exists = try await client.guardedQuery("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            .decode(Bool.self).collectAll().first ?? false
        guard exists else { return nil }
        return try await client.guardedQuery("SELECT version FROM schema_migrations ORDER BY version", logger: logger)
            .decode(Int.self).collectAll()
    }

    /// Whether every bundled migration has been applied.
    public func isUpToDate() async throws -> Bool {
        let applied = Set(try await appliedVersions() ?? [])
        return migrations.allSatisfy { applied.contains($0.version) }
    }
}
