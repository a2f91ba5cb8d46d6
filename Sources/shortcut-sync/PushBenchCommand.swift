import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ShortcutSyncBench
import ShortcutSyncStore
#if canImport(Glibc)
import Glibc
#endif

/// `shortcut-sync bench push`: pushes over HTTP beside raw inserts, end-to-end latency with many
/// streams open, and the service's memory with them (DESIGN §8).
struct PushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push throughput beside raw inserts, push-to-pull latency and memory with many streams (DESIGN §8).",
        discussion: """
            The service runs as a child process (`serve`, this executable) on a fresh database of the \
            same server, so its memory is its own; the load comes from this process.
            """)

    @OptionGroup var load: PushLoadOptions

    @Flag(help: "A short run (1 s per part, 20 streams, 20 samples), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @Option(help: ArgumentHelp("Run only this push scenario (repeat for several): \(PushBenchmark.Scenario.all.map(\.key).joined(separator: ", ")).",
                               valueName: "name"))
    var scenario: [String] = []

    @Flag(help: "Run the sync worker as a process of its own (`serve --no-worker` beside `worker`), so each one's CPU per event is measured apart.")
    var workerProcess = false

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        let known = PushBenchmark.Scenario.all.map(\.key)
        if let unknown = scenario.first(where: { !known.contains($0) }) {
            throw ValidationError("no scenario is called \(unknown); there are \(known.joined(separator: ", "))")
        }
    }

    struct Results: Codable {
        var throughput: [PushBenchmark.Throughput]
        var latency: PushBenchmark.Latency
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let (duration, streams, samples) = load.resolved(smoke: smoke)
        let location = try await database.resolve(logger: logger)
        defer { location.close() }
        let chosen = PushBenchmark.Scenario.all.filter { scenario.isEmpty || scenario.contains($0.key) }
        let measured = try await Self.measure(server: location.url, scenarios: chosen, duration: duration, streams: streams,
                                              samples: samples, workerProcess: workerProcess, logger: logger)
        try printResults(Self.table(measured), measured, json: json)
    }

    /// Runs the scenarios and the latency part on a fresh database of `server`, dropped afterwards.
    static func measure(server: DatabaseURL, scenarios: [PushBenchmark.Scenario], duration: Duration, streams: Int, samples: Int,
                        workerProcess: Bool, logger: Logger) async throws -> Results {
        raiseFileLimit()
        let url = server.with(database: "shortcut_sync_bench_\(UInt32.random(in: 0...UInt32.max))")
        try await url.createDatabaseIfMissing(logger: logger)
        let results: Result<Results, any Error>
        do {
            results = .success(try await measure(on: url, scenarios: scenarios, duration: duration, streams: streams, samples: samples,
                                                 workerProcess: workerProcess, logger: logger))
        } catch {
            results = .failure(error)
        }
        try? await url.dropDatabase(logger: logger)
        return try results.get()
    }

    /// Starts the service on `url`, runs every part, and stops the service (also when a part fails).
    private static func measure(on url: DatabaseURL, scenarios: [PushBenchmark.Scenario], duration: Duration, streams: Int, samples: Int,
                                workerProcess: Bool, logger: Logger) async throws -> Results {
        try await Migrator.migrate(url, logger: logger)
        let service = try ChildService(database: url, worker: !workerProcess)
        defer { service.stop() }
        let worker = try workerProcess ? ChildWorker(database: url) : nil
        defer { worker?.stop() }
        try await service.waitUntilReady()
        print("service: pid \(service.pid) on \(service.url.absoluteString), database \(url.database)"
            + (worker.map { ", worker: pid \($0.pid)" } ?? ""))

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: streams + 64)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var benchmark = PushBenchmark(service: service.url, adminToken: service.adminToken, database: url, servicePID: service.pid,
                                      workerPID: worker?.pid, duration: duration, logger: logger)
        benchmark.report = { print("  \($0)") }
        let measure = benchmark
        let results: Result<Results, any Error>
        do {
            results = .success(try await cancellingOnSignal {
                var throughput: [PushBenchmark.Throughput] = []
                for scenario in scenarios {
                    throughput.append(try await measure.throughput(scenario, http: http))
                }
                let latency = try await measure.endToEnd(streams: streams, samples: samples, http: http)
                return Results(throughput: throughput, latency: latency)
            })
        } catch {
            results = .failure(error)
        }
        try await http.shutdown()
        return try results.get()
    }

    static func table(_ results: Results) -> String {
        let separateWorker = results.throughput.contains { $0.workerCPUMicrosecondsPerEvent != nil }
        var lines = ["| what | ours | raw | ratio | target | push p50 / p99 | service CPU per event |"
                        + (separateWorker ? " worker CPU per event |" : ""),
                     "| --- | --- | --- | --- | --- | --- | --- |" + (separateWorker ? " --- |" : "")]
        for figure in results.throughput {
            let target = figure.scenario.oneAccount ? "—" : "≥ 0.60"
            lines.append("| \(figure.scenario.name) | \(Int(figure.oursEventsPerSecond)) ev/s | \(Int(figure.rawRowsPerSecond)) rows/s "
                + "(\(figure.scenario.rawClients) clients, \(figure.scenario.batch)-row transactions) | \(String(format: "%.2f", figure.ratio)) | \(target) | "
                + String(format: "%.1f / %.1f ms", figure.pushP50Milliseconds, figure.pushP99Milliseconds)
                + (figure.failedPushes > 0 ? " (\(figure.failedPushes) failed)" : "") + " | "
                + (figure.serviceCPUMicrosecondsPerEvent.map { String(format: "%.0f µs", $0) } ?? "?") + " |"
                + (separateWorker ? " " + (figure.workerCPUMicrosecondsPerEvent.map { String(format: "%.0f µs", $0) } ?? "?") + " |" : ""))
        }
        let latency = results.latency
        lines.append("| push → another device's pull, woken by its stream, \(latency.streams) streams open | "
            + String(format: "p50 %.1f ms, p99 %.1f ms", latency.p50Milliseconds, latency.p99Milliseconds) + " | — | — | p99 ≤ 50 ms | — | — |" + (separateWorker ? " — |" : ""))
        let memory = latency.serviceResidentBytes.map { String(format: "%.0f MB", Double($0) / 1_048_576) } ?? "?"
        lines.append("| service resident memory, \(latency.streams) streams open | \(memory) | — | — | ≤ 150 MB | — | — |")
        return lines.joined(separator: "\n")
    }

    /// Many streams need many sockets: the soft limit on open files goes up to the hard one.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// How long and how wide the push part of a benchmark runs.
struct PushLoadOptions: ParsableArguments {
    @Option(help: "Seconds each push scenario and each raw insert run lasts.")
    var seconds: Int = 10

    @Option(help: "Devices holding their streams open for the latency and memory figures.")
    var streams: Int = 1000

    @Option(help: "Push-to-pull samples for the latency figure.")
    var samples: Int = 300

    func validate() throws {
        if seconds < 1 || streams < 2 || samples < 1 { throw ValidationError("--seconds must be 1 or more, --streams 2 or more, --samples 1 or more") }
    }

    /// The run's length per part, streams and samples; a smoke run's are a second, 20 and 20.
    func resolved(smoke: Bool) -> (Duration, streams: Int, samples: Int) {
        smoke ? (.seconds(1), 20, 20) : (.seconds(seconds), streams, samples)
    }
}

/// This executable run as a child process with `arguments`, stopped by `stop()`.
class ChildProcess: @unchecked Sendable {
    fileprivate let process = Process()

    var pid: Int32 { process.processIdentifier }

    /// `environment` is added to this process's: secrets go there, not into `arguments`, which
    /// every user of the machine may list.
    init(arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// `shortcut-sync worker` on a given database.
final class ChildWorker: ChildProcess, @unchecked Sendable {
    init(database: DatabaseURL) throws {
        try super.init(arguments: ["worker", "--log-level", "error"], environment: ["DATABASE_URL": database.urlString])
    }
}

/// `shortcut-sync serve` on a given database, with its worker or without.
final class ChildService: ChildProcess, @unchecked Sendable {
    let url: URL
    let adminToken = "bench-" + UUID().uuidString

    init(database: DatabaseURL, worker: Bool) throws {
        let port = try EmbeddedPostgres.freeLoopbackPort()
        url = URL(string: "http://127.0.0.1:\(port)")!
        try super.init(arguments: ["serve", "--port", "\(port)", "--log-level", "error"] + (worker ? [] : ["--no-worker"]),
                       environment: ["DATABASE_URL": database.urlString, "SHORTCUT_SYNC_ADMIN_TOKEN": adminToken])
    }

    func waitUntilReady() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw ValidationError("the service ended at start (status \(process.terminationStatus))") }
            if let answer = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString + "/readyz"), timeout: .seconds(2)),
               answer.status.code == 200 {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the service did not become ready within 60 s")
    }
}
