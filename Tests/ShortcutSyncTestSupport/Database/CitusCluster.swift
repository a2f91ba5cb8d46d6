import EmbeddedPostgres
import Foundation
import Logging
import PostgresNIO
import SecretFiles
import ShortcutSyncStore
import Synchronization
import Testing

/// A Citus cluster on loopback for the tests: a coordinator and two workers, each an embedded
/// PostgreSQL of its own (`EmbeddedPostgres`, three data directories) that loads Citus, started
/// by `with` and stopped when its body ends, also when it throws (and at exit, should the
/// process end first).
///
/// Each test gets a fresh database, made on every node with `CREATE EXTENSION citus`, the workers
/// added on the coordinator, then migrated with the service's own `Migrator`, which distributes
/// the tables when it finds Citus: what an operator does with `shortcut-sync migrate`.
public final class CitusCluster: Sendable {
    /// Whether Citus is installed for the PostgreSQL the embedded clusters run.
    public static var isInstalled: Bool { EmbeddedPostgres.extensionLibrary("citus") != nil }

    /// Whether the suites on a Citus cluster run: where Citus is installed, and always in CI
    /// (`CI=true`), where a suite that finds no Citus fails instead of being skipped (`.ci/run`
    /// installs it; a skip there would hide that nothing ran on Citus).
    public static var suitesRun: Bool { isInstalled || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The one line a run without Citus prints for the skipped suites.
    public static let notInstalled: Comment =
        "Citus is not installed for this machine's PostgreSQL (no citus.so in its lib directory): the tests on a Citus cluster are skipped"

    /// The cluster of the suite running now (`CitusClusterTrait`).
    @TaskLocal public static var current: CitusCluster?

    /// Shards per distributed table: fewer than Citus's 32, which is plenty for tests on two workers.
    static let shardCount = 8

    public let coordinator: EmbeddedPostgres.Connection
    public let workers: [EmbeddedPostgres.Connection]
    private let logger: Logger
    private let counter = Mutex(0)

    private init(coordinator: EmbeddedPostgres.Connection, workers: [EmbeddedPostgres.Connection], logger: Logger) {
        self.coordinator = coordinator
        self.workers = workers
        self.logger = logger
    }

    /// Starts the three nodes under a new temporary directory, runs `body`, then stops every node
    /// (whatever `body` did) and removes the directory.
    public static func with<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CitusCluster) async throws -> Result
    ) async throws -> Result {
        let logger = TestDatabase.shared.logger
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("shortcut-sync-citus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // One password for the three nodes: Citus's connections between them authenticate with it
        // (pg_dist_authinfo in each database).
        let password = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let settings: [(name: String, value: String)] = [
            ("shared_preload_libraries", "citus"),
            // Writes to reference tables commit on every node with two-phase commit.
            ("max_prepared_transactions", "100"),
            ("citus.shard_count", "\(shardCount)"),
            // citus_stat_counters: how many statements ran on one shard and on several.
            ("citus.enable_stat_counters", "on"),
        ]
        let nodes = try ["coordinator", "worker1", "worker2"].map { name in
            let node = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: node, withIntermediateDirectories: true)
            let postgres = EmbeddedPostgres(dataDirectory: node, logger: logger, settings: settings)
            try SecretFile.create(at: postgres.passwordFile.path, contents: password + "\n")
            return postgres
        }
        func stopAll() async {
            for node in nodes { await node.stop() }
            try? FileManager.default.removeItem(at: directory)
        }
        do {
            var started: [EmbeddedPostgres.Connection] = []
            for node in nodes { started.append(try await node.start()) }
            let cluster = CitusCluster(coordinator: started[0], workers: Array(started.dropFirst()), logger: logger)
            let result = try await body(cluster)
            await stopAll()
            return result
        } catch {
            await stopAll()
            throw error
        }
    }

    /// The coordinator's URL of a new database on every node, with Citus, the workers added,
    /// migrated and distributed by `Migrator` (the tables empty).
    public func freshDatabase() async throws -> DatabaseURL {
        let database = try await emptyDatabase()
        try await Self.step("migrate \(database.database)") { try await Migrator.migrate(database, logger: logger) }
        return database
    }

    /// Runs one step of the setup, naming it and the server's whole answer if it fails (a
    /// `PSQLError` says nothing by itself).
    static func step<Result>(_ what: String, isolation: isolated (any Actor)? = #isolation,
                             _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            throw SetupFailure(description: "\(what): \(String(reflecting: error))")
        }
    }

    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// A new database on every node with Citus and the workers added, but no table: for tests of
    /// what `migrate` does on a cluster.
    public func emptyDatabase() async throws -> DatabaseURL {
        let number = counter.withLock { count in
            count += 1
            return count
        }
        let name = "citus_\(getpid())_\(number)"
        return try await Self.step("a database \(name) on the cluster") { try await makeDatabase(name) }
    }

    private func makeDatabase(_ name: String) async throws -> DatabaseURL {
        for node in [coordinator] + workers {
            let server = try DatabaseURL(node.url(database: "postgres"))
            try await server.withSingleConnection(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            }
            try await server.with(database: name).withSingleConnection(logger: logger) { connection in
                try await connection.query("CREATE EXTENSION citus", logger: logger)
                // nodeid 0: for the connections to every node.
                try await connection.query("""
                    INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo) VALUES (0, 'postgres', \("password=\(node.password)"))
                    """, logger: logger)
            }
        }
        let url = try DatabaseURL(coordinator.url(database: name))
        try await url.withSingleConnection(logger: logger) { connection in
            try await connection.query("SELECT citus_set_coordinator_host('127.0.0.1', \(coordinator.port)::int4)", logger: logger)
            for worker in workers {
                try await connection.query("SELECT citus_add_node('127.0.0.1', \(worker.port)::int4)", logger: logger)
            }
        }
        return url
    }
}

/// Runs a suite's tests on one Citus cluster, started before the first and stopped after the
/// last (also when one fails): `@Suite(.citusCluster)`. Without Citus installed the suite is
/// skipped, with `CitusCluster.notInstalled` as the reason.
public struct CitusClusterTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard CitusCluster.isInstalled else {
            // Only in CI (`suitesRun`): the suite fails (each test finds no cluster), it is not skipped.
            Issue.record("Citus is not installed for this machine's PostgreSQL, and CI must run the suites on a Citus cluster: run ../shared/citus/build.sh")
            return try await function()
        }
        try await CitusCluster.with { cluster in
            try await CitusCluster.$current.withValue(cluster) { try await function() }
        }
    }
}

extension Trait where Self == CitusClusterTrait {
    /// One Citus cluster for the suite's tests.
    public static var citusCluster: CitusClusterTrait { CitusClusterTrait() }
}

extension CitusCluster {
    /// The suite's cluster: for tests of a suite with `.citusCluster`.
    public static func required() throws -> CitusCluster {
        try #require(current, "no Citus cluster: the suite needs the .citusCluster trait")
    }
}
