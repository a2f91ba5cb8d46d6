import EmbeddedPostgres
import Foundation
import Logging
import PostgresNIO
import ShortcutSyncStore

/// `bench citus`: `bench push`'s 100-event and 1-event pushes and its push-to-pull latency, on
/// one PostgreSQL and on a Citus coordinator with two workers that it starts itself
/// (`CitusNodes`, as the tests' cluster does), in one run, side by side with the ratio of the
/// cluster to the one and each node's PostgreSQL CPU per push: once with the service on the
/// coordinator, once attached to a worker (`serve --node`) and routing each account's pushes and
/// pulls to the worker of its shards (`--route-by-account`).
///
/// On one machine the three nodes share its cores with the service and the load, so the ratio
/// is one of CPU per push more than of capacity; each node's CPU per push is what a cluster of
/// more machines would be sized from (docs/citus.md).
public enum CitusBenchmark {
    /// The push scenarios it runs on both (`PushBenchmark.Scenario.key`): the table.
    public static let scenarios = PushBenchmark.Scenario.all.filter { ["batches", "single-events"].contains($0.key) }

    /// Its load without options: 10 s a part, and 100 streams, since three nodes on one machine
    /// take far longer than one PostgreSQL to open `bench push`'s 10,000.
    public static let load = PushBenchmark.Load(duration: .seconds(10), streams: 100, samples: 100)

    /// Workers beside the coordinator.
    public static let workerCount = 2

    /// Devices of the pull part (`PushBenchmark.pullThroughput`), as many as the 1-event pushes'.
    public static let pullDevices = 32

    public struct Results: Sendable, Codable {
        public var machine: BenchMachine
        /// The Citus extension's version on the coordinator.
        public var citusVersion: String
        public var onePostgreSQL: PushBenchmark.Results
        /// The service on the coordinator.
        public var citus: PushBenchmark.Results
        /// The service attached to the first worker (`serve --node`, issue 57 item 2), each
        /// account's pushes and pulls on the worker of its shards (`--route-by-account`), its
        /// other statements on that worker; the coordinator takes none of a push's or a pull's.
        public var attached: PushBenchmark.Results?
        /// The worker it was attached to, as `pg_dist_node` names it.
        public var attachedTo: String?
    }

    /// Runs the scenarios and the latency part on a fresh database of `onePostgreSQL` (dropped
    /// afterwards), then starts a coordinator and `workerCount` workers, runs the same there in a
    /// database made on every node, and stops the nodes, also when a part fails or the task is
    /// cancelled. `interruptible` is `PushBenchmark.run`'s.
    public static func run(
        onePostgreSQL: DatabaseURL, load: PushBenchmark.Load, logger: Logger, report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> PushBenchmark.Results) async throws -> PushBenchmark.Results
    ) async throws -> Results {
        let machine = try await BenchMachine.describe(database: onePostgreSQL, logger: logger)
        report("machine: \(machine)")
        let postmaster = try await DatabaseMeter.with(onePostgreSQL, logger: logger) { $0.postmaster }
        report("one PostgreSQL" + (postmaster.map { ": postmaster \($0)" } ?? ", not on this machine (its CPU is not read)"))
        let one = try await PushBenchmark.run(server: onePostgreSQL, nodes: postmaster.map { [("PostgreSQL", $0)] } ?? [], stackFloor: false,
                                              pgbench: false, pullDevices: pullDevices, scenarios: scenarios, load: load, workerProcess: false, logger: logger, report: report,
                                              interruptible: interruptible)
        report("Citus: starting a coordinator and \(workerCount) workers")
        return try await CitusNodes.with(workerCount: workerCount, statementStatistics: true, logger: logger) { cluster in
            let names = ["coordinator"] + (1...workerCount).map { "worker\($0)" }
            let nodes = zip(names, cluster.postmasters).compactMap { name, pid in pid.map { (name: name, postmaster: $0) } }
            report("Citus: " + zip(names, [cluster.coordinator] + cluster.workers).map { "\($0) on port \($1.port)" }.joined(separator: ", "))
            let database = try await CitusDatabase.create(
                "shortcut_sync_bench", coordinator: try DatabaseURL(cluster.coordinator.url(database: "postgres")),
                workers: cluster.workers.map { try DatabaseURL($0.url(database: "postgres")) }, password: cluster.password, logger: logger)
            let version = try await database.withSingleConnection(logger: logger) { connection in
                try await connection.query("SELECT extversion FROM pg_extension WHERE extname = 'citus'", logger: logger)
                    .decode(String.self).collectAll().first ?? "?"
            }
            // Each worker's own statements too: where a push runs, as its function's statements.
            let workers = try zip(names.dropFirst(), cluster.workers).map { name, worker in
                (name: name, url: try DatabaseURL(worker.url(database: database.database)))
            }
            let citus = try await PushBenchmark.run(server: database, inPlace: true, nodes: nodes, stackFloor: false, pgbench: false,
                                                    pullDevices: pullDevices, scenarios: scenarios, load: load, workerProcess: false,
                                                    statementNodes: workers, logger: logger, report: report, interruptible: interruptible)
            // The same again with the service attached to the first worker, as pg_dist_node names it,
            // each account's pushes and pulls sent to the worker of its shards (`--route-by-account`).
            let worker = try await database.withSingleConnection(logger: logger) { connection in
                try await connection.query("SELECT nodename || ':' || nodeport FROM pg_dist_node WHERE groupid > 0 ORDER BY nodeid LIMIT 1",
                                           logger: logger).decode(String.self).collectAll().first
            }
            guard let worker else { throw BenchError("the cluster has no worker in pg_dist_node") }
            report("Citus: the service attached to \(worker)")
            let attached = try await PushBenchmark.run(server: database, inPlace: true, nodes: nodes, stackFloor: false, pgbench: false,
                                                       pullDevices: pullDevices, scenarios: scenarios, load: load, workerProcess: false, serviceArguments: ["--node", worker, "--route-by-account"],
                                                       statementNodes: workers, logger: logger, report: report, interruptible: interruptible)
            return Results(machine: machine, citusVersion: version, onePostgreSQL: one, citus: citus, attached: attached, attachedTo: worker)
        }
    }
}
