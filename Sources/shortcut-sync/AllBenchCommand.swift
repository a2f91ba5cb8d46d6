import ArgumentParser
import Foundation
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench all`: every target of DESIGN §8 in one run and one table, each beside
/// raw PostgreSQL on the same database, with the machine it ran on.
struct AllBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Every target of DESIGN §8: the worker's figures, then the push figures; one table.",
        discussion: """
            The worker part fills and folds 1,000 accounts × 1,000 events and 10 accounts × 100,000, \
            and the same shapes at 100,000 events for the memory growth from 100k to 1M events. \
            The push part is `bench push`. A full run takes about 5 minutes on 2 cores.
            """)

    @OptionGroup var load: PushLoadOptions

    @Flag(help: "A short run (small logs, 1 s per push part, 20 streams), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    struct Results: Codable {
        var machine: BenchMachine
        /// Each shape of DESIGN §8 at 1M events, then at 100k (for memory growth).
        var worker: [WorkerBenchmark.Result]
        var push: PushBenchCommand.Results
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let location = try await database.resolve(logger: logger)
        defer { location.close() }
        let machine = try await BenchMachine.describe(database: location.url, logger: logger)
        print("machine: \(machine)")
        // Both shapes at 1M events, then at 100k; a smoke run keeps the shapes' proportions on tiny logs.
        let sizes = smoke ? [(10, 100), (2, 500), (10, 10), (2, 50)] : [(1000, 1000), (10, 100_000), (1000, 100), (10, 10_000)]
        let shapes = sizes.map { WorkerBenchmark.Shape(accounts: $0.0, eventsPerAccount: $0.1) }
        let worker = try await cancellingOnSignal { try await WorkerBenchCommand.measure(shapes, at: location.url, logger: logger) }
        let (duration, streams, samples) = load.resolved(smoke: smoke)
        let push = try await PushBenchCommand.measure(server: location.url, scenarios: PushBenchmark.Scenario.all, duration: duration,
                                                      streams: streams, samples: samples, workerProcess: false, logger: logger)
        let results = Results(machine: machine, worker: worker, push: push)
        try printResults(Self.table(results), results, json: json)
    }

    static func table(_ results: Results) -> String {
        func count(_ value: Double) -> String { Int(value.rounded()).formatted(.number.grouping(.automatic)) }
        func ratio(_ value: Double) -> String { String(format: "%.2f", value) }
        func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
        var lines = ["Machine: \(results.machine)", "",
                     "| DESIGN §8 | ours | raw PostgreSQL | ratio | target | |",
                     "| --- | --- | --- | --- | --- | --- |"]
        for figure in results.push.throughput {
            let target = figure.scenario.oneAccount ? "—" : "≥ 0.60"
            let met = figure.scenario.oneAccount ? "" : verdict(figure.ratio >= 0.6)
            lines.append("| \(figure.scenario.name), over HTTP | \(count(figure.oursEventsPerSecond)) ev/s | "
                + "\(count(figure.rawRowsPerSecond)) rows/s (\(figure.scenario.rawClients) clients, \(figure.scenario.batch)-row transactions) | "
                + "\(ratio(figure.ratio)) | \(target) | \(met) |")
        }
        let half = results.worker.count / 2
        for (large, small) in zip(results.worker.prefix(half), results.worker.suffix(from: half)) {
            let raw = large.rawOrderedRead.eventsPerSecond
            let shape = "\(count(Double(large.shape.accounts))) × \(count(Double(large.shape.eventsPerAccount)))"
            for (name, measured, smaller) in [("catch-up", large.catchUp, small.catchUp), ("rebuild", large.rebuild, small.rebuild)] {
                let rate = measured.eventsPerSecond
                lines.append("| worker \(name), \(shape) | \(count(rate)) ev/s | \(count(raw)) ev/s (ordered read of the log) | "
                    + "\(ratio(rate / raw)) | ≥ 100,000 ev/s and ≥ 0.30 | \(verdict(rate >= 100_000 && rate / raw >= 0.3)) |")
                if let peak = measured.peakResidentBytes, let before = smaller.peakResidentBytes, before > 0 {
                    let growth = Double(peak) / Double(before) - 1
                    lines.append("| worker \(name) peak memory, \(count(Double(small.shape.events))) → \(count(Double(large.shape.events))) events | "
                        + String(format: "%.0f → %.0f MiB (%+.0f %%)", Double(before) / 1_048_576, Double(peak) / 1_048_576, growth * 100)
                        + " | — | — | within 20 % | \(verdict(growth <= 0.2)) |")
                }
            }
        }
        let latency = results.push.latency
        lines.append("| push → another device's pull, woken by its stream, \(latency.streams) streams open | "
            + String(format: "p50 %.1f ms, p99 %.1f ms", latency.p50Milliseconds, latency.p99Milliseconds)
            + " | — | — | p99 ≤ 50 ms | \(verdict(latency.p99Milliseconds <= 50)) |")
        if let bytes = latency.serviceResidentBytes {
            lines.append("| service resident memory, \(latency.streams) streams open | "
                + String(format: "%.0f MB (%.0f MiB)", Double(bytes) / 1_000_000, Double(bytes) / 1_048_576)
                + " | — | — | ≤ 150 MB | \(verdict(bytes <= 150_000_000)) |")
        }
        return lines.joined(separator: "\n")
    }
}
