import Foundation
import Logging
import PostgresNIO

/// One numbered SQL file of `Schema/`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String

    /// The migrations shipped with this build, in order.
    public static func bundled() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Schema", withExtension: nil) else {
            throw StoreError.migrationsMissing("the Schema resource is not in the bundle")
        }
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
        return try files.map { url in
            let name = url.deletingPathExtension().lastPathComponent
            guard let version = Int(name.prefix { $0.isNumber }) else {
                throw StoreError.migrationsMissing("\(url.lastPathComponent) does not start with its number")
            }
            return Migration(version: version, name: name, sql: try String(contentsOf: url, encoding: .utf8))
        }
        .sorted { $0.version < $1.version }
    }
}

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

    /// Applies what the database at `url` is missing, over a short-lived connection of its own
    /// (a `PostgresClient` runs only once, so a service's pool cannot be borrowed before it starts).
    @discardableResult
    public static func migrate(_ url: DatabaseURL, logger: Logger) async throws -> [Int] {
        let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        return try await client.withRunning { try await Migrator(client: client, logger: logger).migrate() }
    }

    /// Applies what is missing; returns the versions it applied.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.guardedQuery("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
            do {
                let applied = try await apply(on: connection)
                try await connection.guardedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.guardedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                throw error
            }
        }
    }

    private func apply(on connection: PostgresConnection) async throws -> [Int] {
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
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
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
        return applied
    }

    /// The versions the database has applied, or nil when it has never been migrated.
    public func appliedVersions() async throws -> [Int]? {
        let exists = try await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            .decode(Bool.self).collectAll().first ?? false
        guard exists else { return nil }
        return try await client.query("SELECT version FROM schema_migrations ORDER BY version", logger: logger)
            .decode(Int.self).collectAll()
    }

    /// Whether every bundled migration has been applied.
    public func isUpToDate() async throws -> Bool {
        let applied = Set(try await appliedVersions() ?? [])
        return migrations.allSatisfy { applied.contains($0.version) }
    }
}
