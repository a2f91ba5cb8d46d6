import EmbeddedPostgres
import Foundation
import Logging
import PostgresNIO
import ShortcutSyncStore

/// Real PostgreSQL for tests: one embedded cluster per test process, a fresh database per test.
///
/// Each database is a copy of a migrated template, so a test starts from an empty, current
/// schema in a few milliseconds. `SHORTCUT_SYNC_TEST_DATABASE_URL` points the tests at an
/// external server instead (its user must be allowed to create databases).
public actor TestDatabase {
    public static let shared = TestDatabase()

    static let template = "shortcut_sync_test_template"
    private var server: Task<DatabaseURL, any Error>?
    private var counter = 0
    public nonisolated let logger: Logger = {
        var logger = Logger(label: "tests")
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .error
        return logger
    }()

    /// The URL of a new, migrated, empty database.
    ///
    /// Within a suite on a Citus cluster (`CitusCluster.current`), a database of that cluster:
    /// so the suite runs other suites' tests, unchanged, on Citus.
    public func freshDatabase() async throws -> DatabaseURL {
        if let cluster = CitusCluster.current { return try await cluster.freshDatabase() }
        let server = try await prepareServer()
        counter += 1
        let name = "test_\(ProcessInfo.processInfo.processIdentifier)_\(counter)"
        try await Self.withAdmin(server, logger: logger) { admin in
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(Self.template)"), logger: logger)
        }
        return server.with(database: name)
    }

    /// The URL of a new database with no migration applied (for upgrade tests).
    public func emptyDatabase() async throws -> DatabaseURL {
        if let cluster = CitusCluster.current { return try await cluster.emptyDatabase() }
        let server = try await prepareServer()
        counter += 1
        let name = "test_\(ProcessInfo.processInfo.processIdentifier)_\(counter)_empty"
        try await Self.withAdmin(server, logger: logger) { admin in
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE template0"), logger: logger)
        }
        return server.with(database: name)
    }

    /// Starts the server and the template once, however many tests ask at the same moment.
    private func prepareServer() async throws -> DatabaseURL {
        if server == nil {
            let logger = logger
            server = Task { try await Self.startServer(logger: logger) }
        }
        return try await server!.value
    }

    private static func startServer(logger: Logger) async throws -> DatabaseURL {
        let url: DatabaseURL
        if let external = ProcessInfo.processInfo.environment["SHORTCUT_SYNC_TEST_DATABASE_URL"] {
            url = try DatabaseURL(external)
        } else {
            // A cluster per test process, so two test runs on one machine never meet.
            let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
            for place in Set([temporary.standardizedFileURL.path, "/tmp", "/var/tmp"]) {
                removeClustersOfEndedRuns(in: URL(fileURLWithPath: place))
                CitusNodes.stopOrphans(in: URL(fileURLWithPath: place), logger: logger)
            }
            let directory = temporary.appendingPathComponent("shortcut-sync-tests-\(getpid())")
            // Every suite's services share it: at the run's start its clusters held up to about 360
            // sessions at once (sampled), too near the embedded cluster's own bound of 400, and
            // tests then failed to connect now and then.
            let cluster = EmbeddedPostgres(dataDirectory: directory, logger: logger, settings: [("max_connections", "1000")])
            url = try DatabaseURL(try await cluster.start().url(database: "postgres"))
        }
        try await withAdmin(url, logger: logger) { admin in
            // Databases left by earlier runs of this process's tests, and the old template.
            let leftovers = try await admin.query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%' OR datname = \(Self.template)",
                logger: logger).decode(String.self).collectAll()
            for name in leftovers {
                try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
            }
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(Self.template)"), logger: logger)
        }
        let templateURL = url.with(database: Self.template)
        try await Migrator.migrate(templateURL, logger: logger)
        return url
    }

    /// Stops and deletes the clusters that earlier test processes left behind: they stop theirs
    /// at exit, but one that was killed (a timeout, Ctrl-C twice, a crash) leaves its server
    /// running — the shared one, and those of its tests' own data directories (`shortcut-sync-*`
    /// in the temporary directory), whose owner is a `serve` or test process that has ended and
    /// recorded itself before this process began (what this run's tests leave is theirs to stop).
    /// A killed run's Citus clusters are `CitusNodes.stopOrphans`' to stop and remove.
    private static func removeClustersOfEndedRuns(in directory: URL) {
        let prefix = "shortcut-sync-tests-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix("shortcut-sync-") {
            let folder = directory.appendingPathComponent(name)
            guard name.hasPrefix(prefix) else {
                EmbeddedPostgres.stopOrphans(under: folder, ownedBefore: EmbeddedPostgres.processStart ?? Date.distantPast,
                                             logger: TestDatabase.shared.logger)
                continue
            }
            guard let pid = Int32(name.dropFirst(prefix.count)), !EmbeddedPostgres.isRunning(pid) else { continue }
            Postmaster.quit(dataDirectory: folder)
            try? FileManager.default.removeItem(at: folder)
        }
    }

    private static func withAdmin(
        _ url: DatabaseURL, logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresClient) async throws -> Void
    ) async throws {
        let admin = PostgresClient(configuration: try url.with(database: "postgres").clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        try await admin.withRunning { try await body(admin) }
    }

    /// Runs `body` with a client of a fresh database.
    public static func withClient<Result: Sendable>(
        maximumConnections: Int = 20,
        _ body: (PostgresClient, DatabaseURL) async throws -> Result
    ) async throws -> Result {
        let url = try await shared.freshDatabase()
        let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: shared.logger)
        // The client's sessions have an operator's command's limits (no statement_timeout): its
        // statements have that session's deadline too (none), as `withSingleConnection` and an
        // operator's session do, not the service's 35 s, which a statement on a loaded test
        // machine, with nothing on the server to end it, could outlast and have its connection closed.
        return try await SessionLimits.withStatementDeadline(SessionLimits.command.statementDeadline) {
            try await client.withRunning { try await body(client, url) }
        }
    }
}
