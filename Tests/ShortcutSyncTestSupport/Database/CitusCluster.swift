import EmbeddedPostgres
import Foundation
import Logging
import PostgresNIO
import ShortcutSyncStore
import Synchronization
import Testing

/// A Citus cluster on loopback for the tests: a coordinator and two workers, each an embedded
/// PostgreSQL of its own that loads Citus (`CitusNodes`, which `bench citus` starts too), started
/// by `with` and stopped when its body ends, also when it throws (and at exit, should the
/// process end first).
///
/// Each test gets a fresh database, made on every node with `CREATE EXTENSION citus`, the workers
/// added on the coordinator (`CitusDatabase`), then migrated with the service's own `Migrator`, which distributes
/// the tables when it finds Citus: what an operator does with `shortcut-sync migrate`.
public final class CitusCluster: Sendable {
    /// Whether Citus is installed for the PostgreSQL the embedded clusters run.
    public static var isInstalled: Bool { CitusNodes.isInstalled }

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

    /// The nodes, for the fault tests that stop and start a worker.
    private let nodes: CitusNodes

    private init(nodes: CitusNodes, logger: Logger) {
        coordinator = nodes.coordinator
        workers = nodes.workers
        self.nodes = nodes
        self.logger = logger
    }

    /// Stops worker `index` as a lost machine stops (`pg_ctl stop -m immediate`).
    public func stopWorkerImmediately(_ index: Int) async throws {
        try await nodes.stopWorkerImmediately(index)
    }

    /// Starts worker `index` again on its port.
    public func startWorker(_ index: Int) async throws {
        try await nodes.startWorker(index)
    }

    /// Starts the three nodes (`CitusNodes`, under a new temporary directory), runs `body`, then
    /// stops every node (whatever `body` did) and removes the directory.
    public static func with<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CitusCluster) async throws -> Result
    ) async throws -> Result {
        let logger = TestDatabase.shared.logger
        // pg_stat_statements on every node: what each node ran (CitusAttachedServersTests).
        return try await CitusNodes.with(shardCount: shardCount, statementStatistics: true, logger: logger) { nodes in
            try await body(CitusCluster(nodes: nodes, logger: logger))
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
        try await CitusDatabase.create(name, coordinator: try DatabaseURL(coordinator.url(database: "postgres")),
                                       workers: workers.map { try DatabaseURL($0.url(database: "postgres")) },
                                       password: coordinator.password, logger: logger)
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

extension CitusCluster {
    /// The node (`host:port`) that holds `account`'s shards, asked of the coordinator `client`.
    public static func node(ofAccount account: UUID, client: PostgresClient) async throws -> String? {
        try await client.query("""
            SELECT n.nodename || ':' || n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
            WHERE p.shardid = get_shard_id_for_distribution_column('account_heads', \(account))
            """).decode(String.self).collectAll().first
    }
}
