import Foundation
import Logging
import SecretFiles
#if canImport(Glibc)
import Glibc
#endif

/// A Citus cluster's nodes on loopback: a coordinator and its workers, each an `EmbeddedPostgres`
/// of its own (a data directory each, under one new temporary directory) that loads Citus, all
/// with one password, since Citus's connections between the nodes authenticate with it.
///
/// `with` starts them, runs its body and then stops every node and removes the directory,
/// whatever the body did: it threw, or its task was cancelled (a signal). The tests' cluster and
/// `bench citus` both start theirs here, so that what the tests measure against is what the
/// benchmark measures. It knows no SQL: a database on the nodes, with the extension and the
/// workers added, is the store's (`CitusDatabase`).
public final class CitusNodes: Sendable {
    /// Whether Citus is installed for the PostgreSQL the embedded clusters run.
    public static var isInstalled: Bool { EmbeddedPostgres.extensionLibrary("citus") != nil }

    public let coordinator: EmbeddedPostgres.Connection
    public let workers: [EmbeddedPostgres.Connection]
    /// Every node's postmaster, the coordinator's first (nil where its `postmaster.pid` could not
    /// be read): a benchmark reads each node's CPU time from /proc through it.
    public let postmasters: [pid_t?]
    /// The password every node shares (the nodes' `authinfo`).
    public var password: String { coordinator.password }

    /// The nodes themselves, the coordinator's first: a fault test stops and starts a worker.
    private let nodes: [EmbeddedPostgres]

    private init(coordinator: EmbeddedPostgres.Connection, workers: [EmbeddedPostgres.Connection], postmasters: [pid_t?],
                 nodes: [EmbeddedPostgres]) {
        self.coordinator = coordinator
        self.workers = workers
        self.postmasters = postmasters
        self.nodes = nodes
    }

    /// Stops worker `index` as a lost machine stops (`pg_ctl stop -m immediate`), for fault tests.
    public func stopWorkerImmediately(_ index: Int) async throws {
        try await nodes[index + 1].stopImmediately()
    }

    /// Starts worker `index` again on its port, after `stopWorkerImmediately`.
    public func startWorker(_ index: Int) async throws {
        _ = try await nodes[index + 1].start(preferredPort: workers[index].port)
    }

    /// Starts a coordinator and `workerCount` workers under a new temporary directory, runs
    /// `body`, then stops every node and removes the directory, also when `body` throws or the
    /// task is cancelled. First it stops and removes the clusters whose owner ended without
    /// stopping them (`stopOrphans`): a killed run's.
    ///
    /// `shardCount`: `citus.shard_count` (Citus's own 32 without one). `statementStatistics`:
    /// also load `pg_stat_statements` on every node, where it is installed (a benchmark's
    /// statement table).
    public static func with<Result: Sendable>(
        workerCount: Int = 2, shardCount: Int? = nil, statementStatistics: Bool = false, logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CitusNodes) async throws -> Result
    ) async throws -> Result {
        stopOrphans(logger: logger)
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("\(directoryPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let password = EmbeddedPostgres.randomPassword()
        let loaded = statementStatistics && EmbeddedPostgres.extensionLibrary("pg_stat_statements") != nil
            ? "citus,pg_stat_statements" : "citus"  // Citus must come first
        var settings: [(name: String, value: String)] = [
            ("shared_preload_libraries", loaded),
            // Writes to reference tables commit on every node with two-phase commit.
            ("max_prepared_transactions", "100"),
            // citus_stat_counters: how many statements ran on one shard and on several.
            ("citus.enable_stat_counters", "on"),
        ]
        if let shardCount { settings.append(("citus.shard_count", "\(shardCount)")) }
        // The statements inside functions as well: a push's, run by its function on a worker.
        if loaded.contains("pg_stat_statements") { settings.append(("pg_stat_statements.track", "all")) }
        let names = ["coordinator"] + (1...max(workerCount, 1)).map { "worker\($0)" }
        var nodes: [EmbeddedPostgres] = []
        func stopAll() async {
            for node in nodes {
                await node.stop()
                node.stopLeftover()
            }
            try? FileManager.default.removeItem(at: directory)
        }
        do {
            for name in names {
                let path = directory.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
                let node = EmbeddedPostgres(dataDirectory: path, logger: logger, settings: settings)
                try SecretFile.create(at: node.passwordFile.path, contents: password + "\n")
                nodes.append(node)
            }
            var started: [EmbeddedPostgres.Connection] = []
            for node in nodes {
                try Task.checkCancellation()
                started.append(try await node.start())
            }
            let cluster = CitusNodes(coordinator: started[0], workers: Array(started.dropFirst()), postmasters: nodes.map(\.postmaster),
                                     nodes: nodes)
            let result = try await body(cluster)
            await stopAll()
            return result
        } catch {
            await stopAll()
            throw error
        }
    }
}
