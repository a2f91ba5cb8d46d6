import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ShortcutSyncStore

extension PushBenchmark {
    /// How long and how wide the push part runs.
    public struct Load: Sendable {
        /// How long each push scenario and each raw insert run lasts.
        public var duration: Duration
        /// Devices holding their streams open for the latency and memory figures.
        public var streams: Int
        /// Push-to-pull samples for the latency figure.
        public var samples: Int

        public init(duration: Duration, streams: Int, samples: Int) {
            self.duration = duration
            self.streams = streams
            self.samples = samples
        }

        /// A short run, to check that it works: a second per part, 20 streams, 20 samples.
        public static let smoke = Load(duration: .seconds(1), streams: 20, samples: 20)
    }

    public struct Results: Sendable, Codable {
        public var throughput: [Throughput]
        public var latency: Latency
        /// The pull part, where it ran (`bench citus`).
        public var pulls: PullThroughput? = nil

        /// Each scenario's two ratios, by its key, beside the figures: a script reading the JSON
        /// needs not work them out.
        private enum EncodedKeys: String, CodingKey { case throughput, latency, pulls, ratios }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: EncodedKeys.self)
            try container.encode(throughput, forKey: .throughput)
            try container.encode(latency, forKey: .latency)
            try container.encodeIfPresent(pulls, forKey: .pulls)
            let ratios = throughput.map { ($0.scenario.key, ["toPostgresNIORaw": $0.ratio, "toPgbenchRaw": $0.pgbenchRatio]) }
            try container.encode(Dictionary(ratios, uniquingKeysWith: { $1 }), forKey: .ratios)
        }
    }

    /// Runs `scenarios`, then the latency part, on a fresh database of `server` (dropped
    /// afterwards) with the service as a child process (stopped afterwards, also when a part
    /// fails). `interruptible` runs the measuring itself, so that the caller can cut it short
    /// (at a signal) and the cleanup still runs; `report` is told what the run is doing.
    ///
    /// With `inPlace`, in the database of `server` itself, migrated and kept: for a Citus
    /// coordinator's database, which a fresh database beside it would not be on the workers
    /// (it needs the extension and the workers added in it on every node). `nodes`: the
    /// database's servers on this machine, whose CPU each scenario reads (`Throughput.nodesCPU`).
    /// `stackFloor`: `measuresStackFloor`; `pgbench`: `measuresPgbench`; `pullDevices`: the pull
    /// part's devices (0: none). `serviceArguments`: more of the service's `serve` options
    /// (`bench citus`: `--node`). `statementNodes`: `PushBenchmark.statementNodes`.
    public static func run(
        server: DatabaseURL, inPlace: Bool = false, nodes: [(name: String, postmaster: Int32)] = [], stackFloor: Bool = true, pgbench: Bool = true,
        pullDevices: Int = 0, scenarios: [Scenario], load: Load, workerProcess: Bool, serviceArguments: [String] = [],
        statementNodes: [(name: String, url: DatabaseURL)] = [], logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> Results) async throws -> Results
    ) async throws -> Results {
        guard !inPlace else {
            try await Migrator.migrate(server, logger: logger)
            return try await run(on: server, nodes: nodes, stackFloor: stackFloor, pgbench: pgbench, pullDevices: pullDevices, scenarios: scenarios, load: load,
                                 workerProcess: workerProcess, serviceArguments: serviceArguments, statementNodes: statementNodes, logger: logger, report: report,
                                 interruptible: interruptible)
        }
        return try await withFreshDatabase(on: server, logger: logger) { url in
            try await run(on: url, nodes: nodes, stackFloor: stackFloor, pgbench: pgbench, pullDevices: pullDevices, scenarios: scenarios, load: load,
                          workerProcess: workerProcess, serviceArguments: serviceArguments, statementNodes: statementNodes, logger: logger, report: report,
                          interruptible: interruptible)
        }
    }

    private static func run(
        on url: DatabaseURL, nodes: [(name: String, postmaster: Int32)], stackFloor: Bool, pgbench: Bool, pullDevices: Int, scenarios: [Scenario],
        load: Load,
        workerProcess: Bool, serviceArguments: [String], statementNodes: [(name: String, url: DatabaseURL)], logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> Results) async throws -> Results
    ) async throws -> Results {
        try await BenchService.with(database: url, workerProcess: workerProcess, extraArguments: serviceArguments) { service in
            report("service: pid \(service.servicePID) on \(service.url.absoluteString), database \(url.database)"
                + (service.workerPID.map { ", worker: pid \($0)" } ?? ""))

            var benchmark = PushBenchmark(service: service.url, operators: service.operators, adminToken: service.adminToken, database: url,
                                          servicePID: service.servicePID, workerPID: service.workerPID,
                                          duration: load.duration, logger: logger)
            benchmark.report = { report("  \($0)") }
            benchmark.nodes = nodes
            benchmark.statementNodes = statementNodes
            benchmark.measuresStackFloor = stackFloor
            benchmark.measuresPgbench = pgbench
            benchmark.pullDevices = pullDevices
            let measure = benchmark
            return try await withBenchHTTPClient(connections: load.streams + 1024) { http in
                try await interruptible {
                    var throughput: [Throughput] = []
                    for scenario in scenarios {
                        throughput.append(try await measure.throughput(scenario, http: http))
                    }
                    let pulls = measure.pullDevices > 0 ? try await measure.pullThroughput(devices: measure.pullDevices, http: http) : nil
                    let latency = try await measure.endToEnd(streams: load.streams, samples: load.samples, http: http)
                    return Results(throughput: throughput, latency: latency, pulls: pulls)
                }
            }
        }
    }
}

extension PushBenchmark.Results {
    /// One line per push scenario, then the latency and the service's memory.
    public var table: String {
        let separateWorker = throughput.contains { $0.workerCPUMicrosecondsPerEvent != nil }
        var lines = ["| what | ours | raw (PostgresNIO) | ratio | target | raw (pgbench) | ratio to pgbench | push p50 / p99 | service CPU per event |"
                        + (separateWorker ? " worker CPU per event |" : "") + " PostgreSQL per event |",
                     "| --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (separateWorker ? " --- |" : "") + " --- |"]
        for figure in throughput {
            let target = figure.scenario.target.map { String(format: "≥ %.2f", $0) } ?? "—"
            let pgbench = figure.pgbenchRowsPerSecond.map { "\(Int($0)) rows/s" } ?? "not measured"
            lines.append("| \(figure.scenario.name) | \(Int(figure.oursEventsPerSecond)) ev/s | \(Int(figure.rawRowsPerSecond)) rows/s "
                + "(\(figure.scenario.rawClients) clients, \(figure.scenario.batch)-row transactions) | \(String(format: "%.2f", figure.ratio)) | \(target) | "
                + "\(pgbench) | \(figure.pgbenchRatio.map { String(format: "%.2f", $0) } ?? "—") | "
                + String(format: "%.1f / %.1f ms", figure.pushP50Milliseconds, figure.pushP99Milliseconds)
                + (figure.failedPushes > 0 ? " (\(figure.failedPushes) failed)" : "") + " | "
                + (figure.serviceCPUMicrosecondsPerEvent.map { String(format: "%.0f µs", $0) } ?? "?")
                + (figure.floorCPUMicrosecondsPerPush.map { floor in
                    String(format: " (the stack's floor %.0f µs a push", floor)
                        + (figure.serviceCPUOverFloor.map { String(format: "; ours %.2f×", $0) } ?? "")
                        + (figure.sideBySide.flatMap(\.oursOverFloor).map { String(format: "; side by side %.2f×", $0) } ?? "") + ")"
                } ?? "") + " |"
                + (separateWorker ? " " + (figure.workerCPUMicrosecondsPerEvent.map { String(format: "%.0f µs", $0) } ?? "?") + " |" : "")
                + " " + (figure.database?.summary ?? "?")
                + (figure.databaseOneAtATime.map { "; one push at a time: " + $0.summary } ?? "") + " |")
        }
        let filler = " — |" + (separateWorker ? " — |" : "") + " — |"
        // The verdict under "push p50 / p99", as before pgbench's two columns came between.
        lines += latency.rows { "— | — | " + ($0 ? "met" : "**not met**") }.map { $0 + filler }
        return lines.joined(separator: "\n")
    }
}
