import Foundation

/// `bench all`: every target of DESIGN §8 in one table, each beside raw PostgreSQL on the same
/// database, with the machine it ran on.
public enum AllBenchmarks {
    public struct Results: Sendable, Codable {
        public var machine: BenchMachine
        /// Each shape of DESIGN §8 at 1M events, then at 100k (for memory growth).
        public var rebuild: [RebuildBenchmark.Result]
        public var push: PushBenchmark.Results
        public var sustained: SustainedBenchmark.Result
        public var runaway: RunawayBenchmark.Result
        public var wake: WakeBenchmark.Result
        public var suggestions: SuggestionBenchmark.Result
        /// One PostgreSQL beside a Citus cluster (`bench citus`); nil where Citus is not installed.
        public var citus: CitusBenchmark.Results?

        public init(machine: BenchMachine, rebuild: [RebuildBenchmark.Result], push: PushBenchmark.Results,
                    sustained: SustainedBenchmark.Result, runaway: RunawayBenchmark.Result, wake: WakeBenchmark.Result,
                    suggestions: SuggestionBenchmark.Result, citus: CitusBenchmark.Results? = nil) {
            self.machine = machine
            self.rebuild = rebuild
            self.push = push
            self.sustained = sustained
            self.runaway = runaway
            self.wake = wake
            self.suggestions = suggestions
            self.citus = citus
        }
    }

    /// Both shapes of DESIGN §8 at 1M events, then at 100k; a smoke run keeps their accounts —
    /// 1,000 interleaved, where a cost per account shows (issue 68: one went unseen with 10) —
    /// and the few accounts' proportions, on tiny logs.
    public static func rebuildShapes(smoke: Bool) -> [RebuildBenchmark.Shape] {
        let sizes = smoke ? [(1000, 20), (2, 500), (1000, 2), (2, 50)] : [(1000, 1000), (10, 100_000), (1000, 100), (10, 10_000)]
        return sizes.map { RebuildBenchmark.Shape(accounts: $0.0, eventsPerAccount: $0.1) }
    }
}

extension AllBenchmarks.Results {
    /// The table of DESIGN §8's targets: each figure, raw PostgreSQL's, their ratio and whether the target is met.
    public var table: String {
        func count(_ value: Double) -> String { Int(value.rounded()).formatted(.number.grouping(.automatic)) }
        func ratio(_ value: Double) -> String { String(format: "%.2f", value) }
        func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
        var lines = ["Machine: \(machine)", "",
                     "| DESIGN §8 | ours | raw PostgreSQL | ratio | target | |",
                     "| --- | --- | --- | --- | --- | --- |"]
        for figure in push.throughput {
            let target = figure.scenario.target.map { String(format: "≥ %.2f", $0) } ?? "—"
            let met = figure.scenario.target.map { verdict(figure.ratio >= $0) } ?? ""
            lines.append("| \(figure.scenario.name), over HTTP, folded in the push | \(count(figure.oursEventsPerSecond)) ev/s | "
                + "\(count(figure.rawRowsPerSecond)) rows/s (\(figure.scenario.rawClients) clients, \(figure.scenario.batch)-row transactions) | "
                + "\(ratio(figure.ratio)) | \(target) | \(met) |")
        }
        let half = rebuild.count / 2
        for (large, small) in zip(rebuild.prefix(half), rebuild.suffix(from: half)) {
            let raw = large.rawOrderedRead.eventsPerSecond
            let shape = "\(count(Double(large.shape.accounts))) × \(count(Double(large.shape.eventsPerAccount)))"
            for (name, measured, smaller) in [("maintenance fold of an imported backlog", large.catchUp, small.catchUp),
                                              ("rebuild", large.rebuild, small.rebuild)] {
                let rate = measured.eventsPerSecond
                lines.append("| \(name), \(shape)\(large.shape.accounts > 1 ? " interleaved" : "") | \(count(rate)) ev/s | \(count(raw)) ev/s (ordered read of the log) | "
                    + "\(ratio(rate / raw)) | ≥ 100,000 ev/s and ≥ 0.30 | \(verdict(rate >= 100_000 && rate / raw >= 0.3)) |")
                if let peak = measured.peakResidentBytes, let before = smaller.peakResidentBytes, before > 0 {
                    let growth = Double(peak) / Double(before) - 1
                    lines.append("| \(name) peak memory, \(count(Double(small.shape.events))) → \(count(Double(large.shape.events))) events | "
                        + String(format: "%.0f → %.0f MiB (%+.0f %%)", Double(before) / 1_048_576, Double(peak) / 1_048_576, growth * 100)
                        + " | — | — | within 20 % | \(verdict(growth <= 0.2)) |")
                }
            }
        }
        lines += push.latency.rows(verdict: verdict)
        return lines.joined(separator: "\n") + "\n\n" + sustained.table + "\n\n" + runaway.table + "\n\n" + wake.table
            + "\n\n" + suggestions.table + (citus.map { "\n\n" + $0.table } ?? "")
    }
}
