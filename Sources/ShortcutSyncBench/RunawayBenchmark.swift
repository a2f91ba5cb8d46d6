import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import ShortcutSyncStore

/// `bench runaway` (issue 19): a runaway device cannot starve the others. Calm accounts push a
/// 10-event batch about once a second each, in turns without and with one runaway account whose
/// devices push 100-event batches as fast as they can and send a refused batch again at once
/// (ignoring `Retry-After`). The service runs with the push budgets a person gets. The calm
/// accounts' push p99 with the runaway should be within 20 % of it without.
///
/// The two are measured in alternate rounds and each side's pushes pooled, so that what the
/// machine does besides (its speed moved the p99 alone by a factor of five between runs of one
/// build) falls on both sides alike; each round's ratio is reported too, to show the spread.
///
/// With the database's disk on this machine (the embedded cluster, or `--flush-probe-directory`),
/// a `FlushProbe` times a small flush on it all along, and each round says its longest. A round
/// in which the disk stalled a flush (over 20 ms, `FlushProbe.stall`) is slowed for every
/// account alike, so the ratio over the round pairs without such a stall is given as well.
public struct RunawayBenchmark: Sendable {
    public struct Load: Sendable {
        public var calmAccounts: Int
        public var runawayDevices: Int
        /// How long each side is measured in all, over its rounds.
        public var duration: Duration
        /// Rounds of each side, alternately: without, with, without, with…
        public var rounds: Int

        public init(calmAccounts: Int = 100, runawayDevices: Int = 8, duration: Duration = .seconds(20), rounds: Int = 5) {
            self.calmAccounts = calmAccounts
            self.runawayDevices = runawayDevices
            self.duration = duration
            self.rounds = rounds
        }

        public static let smoke = Load(calmAccounts: 10, runawayDevices: 2, duration: .seconds(2), rounds: 2)
    }

    /// The calm accounts' pushes, and the runaway's: of one round, or of one side's rounds pooled.
    public struct Part: Sendable, Hashable, Codable {
        public var calmPushes: Int
        public var calmFailed: Int
        public var calmP50Milliseconds: Double
        public var calmP99Milliseconds: Double
        /// Events of the runaway's pushes the service took, and its pushes refused with 429.
        public var runawayEvents: Int
        public var runawayRefused: Int
        public var seconds: Double
        /// The longest flush of the database's disk the probe timed, and the flushes over 20 ms
        /// (`FlushProbe.stall`); nil without a probe.
        public var longestFlushMilliseconds: Double?
        public var flushStalls: Int?
    }

    public struct Result: Sendable, Codable {
        public var calmAccounts: Int
        public var runawayDevices: Int
        public var without: Part
        public var with: Part
        /// Each round's calm p99 with the runaway over the one without it just before.
        public var roundRatios: [Double]
        /// The calm p99 with over without, pooled over the round pairs in which the probe saw no
        /// flush of the database's disk over 20 ms on either side, and how many pairs those were;
        /// nil without a probe (and the ratio nil when no pair was free of stalls).
        public var stallFreeRatio: Double?
        public var stallFreeRounds: Int?
        public var p99Ratio: Double { without.calmP99Milliseconds > 0 ? with.calmP99Milliseconds / without.calmP99Milliseconds : 0 }
    }

    let load: Load
    let sustained: SustainedBenchmark
    let registrar: PushBenchmark

    /// Runs on a fresh database of `server` (dropped afterwards) with the service as a child process;
    /// with `flushProbeDirectory` (a directory on the database's disk), a `FlushProbe` there.
    public static func run(
        server: DatabaseURL, load: Load, flushProbeDirectory: URL? = nil, logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> Result) async throws -> Result
    ) async throws -> Result {
        try await withFreshDatabase(on: server, logger: logger) { url in
            try await BenchService.with(database: url, workerProcess: false, budgeted: true) { service in
                report("service: pid \(service.servicePID) on \(service.url.absoluteString), with a person's push budgets")
                let benchmark = RunawayBenchmark(
                    load: load,
                    sustained: SustainedBenchmark(service: service.url, adminToken: service.adminToken, load: .init(), logger: logger),
                    registrar: PushBenchmark(service: service.url, operators: service.operators, adminToken: service.adminToken, database: url,
                                             servicePID: service.servicePID, duration: load.duration, logger: logger))
                return try await withBenchHTTPClient(connections: load.calmAccounts + load.runawayDevices + 64) { http in
                    try await FlushProbe.with(directory: flushProbeDirectory) { probe in
                        try await interruptible { try await benchmark.measure(http: http, probe: probe, report: report) }
                    }
                }
            }
        }
    }

    func measure(http: HTTPClient, probe: FlushProbe?, report: @escaping @Sendable (String) -> Void) async throws -> Result {
        let calm = try await registrar.register(devices: load.calmAccounts, accounts: load.calmAccounts, http: http).map(\.token)
        let runaway = try await registrar.register(devices: load.runawayDevices, accounts: 1, http: http).map(\.token)
        var seqs = [Int64](repeating: 0, count: calm.count), runawaySeqs = [Int64](repeating: 0, count: runaway.count)
        // Not measured: the service's first pushes, on pooled connections that prepare (and plan)
        // the push's statements for the first time, and the client opening its connections, so
        // that the calm accounts alone are measured as they are beside the runaway: warm.
        _ = try await part(calm: calm, seqs: &seqs, runaway: [], runawaySeqs: &runawaySeqs, http: http, duration: min(load.duration, .seconds(3)))
        let rounds = max(1, load.rounds), roundLength = load.duration / rounds
        var measured: [Round] = []
        for round in 1...rounds {
            _ = probe?.take()
            var alone = try await part(calm: calm, seqs: &seqs, runaway: [], runawaySeqs: &runawaySeqs, http: http, duration: roundLength)
            alone.part.record(probe?.take())
            var beside = try await part(calm: calm, seqs: &seqs, runaway: runaway, runawaySeqs: &runawaySeqs, http: http, duration: roundLength)
            beside.part.record(probe?.take())
            measured.append(Round(alone: alone, beside: beside))
            report("  round \(round) of \(rounds): calm push p99 alone \(String(format: "%.1f", alone.part.calmP99Milliseconds)) ms, "
                + "beside the runaway \(String(format: "%.1f", beside.part.calmP99Milliseconds)) ms; "
                + "the runaway got \(beside.part.runawayEvents) events in, \(beside.part.runawayRefused) pushes refused"
                + Self.flushReport(alone.part, beside.part))
        }
        if let failure = probe?.failure { report("  \(failure); the rounds after it timed no flush") }
        return Self.result(calmAccounts: calm.count, runawayDevices: runaway.count, rounds: measured)
    }

    /// One round: the calm accounts alone, then beside the runaway.
    struct Round {
        var alone: (part: Part, histogram: Histogram<UInt64>)
        var beside: (part: Part, histogram: Histogram<UInt64>)
    }

    /// Each side's rounds pooled, each round's ratio, and, when the rounds were probed, the
    /// ratio pooled over the rounds in which neither side saw a flush stall.
    static func result(calmAccounts: Int, runawayDevices: Int, rounds: [Round]) -> Result {
        var without = Side(), with = Side(), stallFreeWithout = Side(), stallFreeWith = Side()
        for round in rounds {
            without.add(round.alone)
            with.add(round.beside)
            if round.alone.part.flushStalls == 0 && round.beside.part.flushStalls == 0 {
                stallFreeWithout.add(round.alone)
                stallFreeWith.add(round.beside)
            }
        }
        let ratios = zip(without.parts, with.parts).map { $0.calmP99Milliseconds > 0 ? $1.calmP99Milliseconds / $0.calmP99Milliseconds : 0 }
        var result = Result(calmAccounts: calmAccounts, runawayDevices: runawayDevices, without: without.pooled, with: with.pooled, roundRatios: ratios)
        // Pooled, a side has flush figures only when every one of its rounds was probed.
        if result.without.flushStalls != nil, result.with.flushStalls != nil {
            result.stallFreeRounds = stallFreeWith.parts.count
            let alone = stallFreeWithout.pooled.calmP99Milliseconds
            result.stallFreeRatio = stallFreeWith.parts.isEmpty || alone <= 0 ? nil : stallFreeWith.pooled.calmP99Milliseconds / alone
        }
        return result
    }

    /// "; the database's disk: …" for a round's report, or nothing without a probe.
    private static func flushReport(_ alone: Part, _ beside: Part) -> String {
        guard let aloneLongest = alone.longestFlushMilliseconds, let besideLongest = beside.longestFlushMilliseconds else { return "" }
        return String(format: "; the database's disk: longest flush %.1f ms alone, %.1f ms beside", aloneLongest, besideLongest)
    }

    /// One side's rounds, and their calm pushes pooled.
    private struct Side {
        var parts: [Part] = []
        var histogram = PushTally.newHistogram()

        mutating func add(_ round: (part: Part, histogram: Histogram<UInt64>)) {
            parts.append(round.part)
            histogram.add(round.histogram)
        }

        var pooled: Part {
            let probed = !parts.isEmpty && parts.allSatisfy { $0.flushStalls != nil }
            return Part(calmPushes: parts.map(\.calmPushes).reduce(0, +), calmFailed: parts.map(\.calmFailed).reduce(0, +),
                        calmP50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                        calmP99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000,
                        runawayEvents: parts.map(\.runawayEvents).reduce(0, +), runawayRefused: parts.map(\.runawayRefused).reduce(0, +),
                        seconds: parts.map(\.seconds).reduce(0, +),
                        longestFlushMilliseconds: probed ? parts.compactMap(\.longestFlushMilliseconds).max() : nil,
                        flushStalls: probed ? parts.compactMap(\.flushStalls).reduce(0, +) : nil)
        }
    }

    /// The calm accounts for `duration`, beside the `runaway` devices if any; each device's seqs
    /// go on from `seqs` and `runawaySeqs`. Ends once every push under way has its answer.
    private func part(
        calm: [String], seqs: inout [Int64], runaway: [String], runawaySeqs: inout [Int64], http: HTTPClient, duration: Duration
    ) async throws -> (part: Part, histogram: Histogram<UInt64>) {
        let started = ContinuousClock.now
        let deadline = started + duration
        let sustained = self.sustained, starting = seqs, runawayStarting = runawaySeqs
        enum Outcome: Sendable {
            case calm(index: Int, seq: Int64, histogram: Histogram<UInt64>, pushes: Int, failed: Int)
            case runaway(index: Int, seq: Int64, events: Int, refused: Int)
        }
        let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
            for (index, token) in calm.enumerated() {
                group.addTask {
                    var seq = starting[index], histogram = PushTally.newHistogram(), pushes = 0, failed = 0
                    var next = ContinuousClock.now + .milliseconds(Int.random(in: 0..<1000))
                    while true {
                        try await Task.sleep(until: next)
                        guard ContinuousClock.now < deadline else { break }
                        next = next + .seconds(1)
                        let pushStarted = ContinuousClock.now
                        let answer = try await sustained.push(BenchEvents.pushBody(from: seq + 1, count: 10), token: token, http: http)
                        histogram.record(UInt64((ContinuousClock.now - pushStarted).inSeconds * 1_000_000))
                        if answer.accepted { seq += 10; pushes += 1 } else { failed += 1 }
                    }
                    return .calm(index: index, seq: seq, histogram: histogram, pushes: pushes, failed: failed)
                }
            }
            for (index, token) in runaway.enumerated() {
                group.addTask {
                    var seq = runawayStarting[index], events = 0, refused = 0
                    // Each device of the runaway account: its own seqs, 100 events a push, no
                    // pause; a refused push is sent again as it was (made once: the load
                    // generator shares the cores it measures the calm accounts on).
                    var body = BenchEvents.pushBody(from: seq + 1, count: 100)
                    while ContinuousClock.now < deadline {
                        let answer = try await sustained.push(body, token: token, http: http)
                        if answer.accepted {
                            seq += 100; events += 100
                            body = BenchEvents.pushBody(from: seq + 1, count: 100)
                        } else if answer.status == 429 {
                            refused += 1
                        }
                    }
                    return .runaway(index: index, seq: seq, events: events, refused: refused)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var histogram = PushTally.newHistogram(), part = Part(calmPushes: 0, calmFailed: 0, calmP50Milliseconds: 0, calmP99Milliseconds: 0,
                                                               runawayEvents: 0, runawayRefused: 0, seconds: (ContinuousClock.now - started).inSeconds)
        for outcome in outcomes {
            switch outcome {
            case .calm(let index, let seq, let calmHistogram, let pushes, let failed):
                seqs[index] = seq
                histogram.add(calmHistogram)
                part.calmPushes += pushes
                part.calmFailed += failed
            case .runaway(let index, let seq, let events, let refused):
                runawaySeqs[index] = seq
                part.runawayEvents += events
                part.runawayRefused += refused
            }
        }
        part.calmP50Milliseconds = Double(histogram.valueAtPercentile(50)) / 1000
        part.calmP99Milliseconds = Double(histogram.valueAtPercentile(99)) / 1000
        return (part, histogram)
    }
}

extension RunawayBenchmark.Part {
    /// What the flush probe saw in this part's time, if there is a probe.
    mutating func record(_ window: FlushProbe.Window?) {
        guard let window else { return }
        longestFlushMilliseconds = window.longestMilliseconds
        flushStalls = window.stalls
    }
}

extension RunawayBenchmark.Result {
    public var table: String {
        func milliseconds(_ part: RunawayBenchmark.Part) -> String {
            String(format: "p50 %.1f ms, p99 %.1f ms", part.calmP50Milliseconds, part.calmP99Milliseconds)
                + " (\(part.calmPushes) pushes" + (part.calmFailed > 0 ? ", **\(part.calmFailed) failed**" : "") + ")"
        }
        let met = meets(p99Ratio)
        return [
            "| issue 19, a runaway device | ours | target | |",
            "| --- | --- | --- | --- |",
            "| \(calmAccounts) calm accounts, a 10-event push a second each, alone | \(milliseconds(without)) | — | |",
            "| the same beside one runaway account (\(runawayDevices) devices, 100-event pushes back to back) | \(milliseconds(with)) | — | |",
            "| calm push p99 with / without the runaway, \(roundRatios.count) alternate rounds pooled | " + String(format: "%.2f", p99Ratio)
                + " | ≤ 1.20 | \(met ? "met" : "**not met**") |",
            "| each round's ratio | " + roundRatios.map { String(format: "%.2f", $0) }.joined(separator: ", ") + " | — | |",
            "| the runaway account | " + String(format: "%.0f events/s taken", Double(with.runawayEvents) / max(with.seconds, 0.001))
                + ", \(with.runawayRefused) pushes refused with 429 | — | |",
        ].joined(separator: "\n") + flushRows
    }

    /// Whether a calm p99 ratio meets issue 19's target (≤ 1.20), every calm push answered.
    private func meets(_ ratio: Double) -> Bool {
        ratio <= 1.2 && with.calmFailed == 0 && without.calmFailed == 0
    }

    /// The flush probe's rows, when there was a probe: what the database's disk did in the
    /// rounds, and the ratio over the rounds it did not stall in.
    private var flushRows: String {
        guard let stallFreeRounds, let aloneStalls = without.flushStalls, let besideStalls = with.flushStalls else { return "" }
        let stallMilliseconds = FlushProbe.stallMilliseconds
        let disk = String(format: "longest %.1f ms alone, %.1f ms beside; ", without.longestFlushMilliseconds ?? 0, with.longestFlushMilliseconds ?? 0)
            + "over \(stallMilliseconds) ms: \(aloneStalls) alone, \(besideStalls) beside"
        let ratio = stallFreeRatio.map { ratio in
            String(format: "%.2f", ratio) + " | ≤ 1.20 | " + (meets(ratio) ? "met" : "**not met**") + " |"
        } ?? "— (every round had a stall) | ≤ 1.20 | |"
        return "\n" + [
            "| the database's disk: \(FlushProbe.what) beside the load | \(disk) | — | |",
            "| calm push p99 with / without, pooled over the \(stallFreeRounds) round pairs with no flush over \(stallMilliseconds) ms | \(ratio)",
        ].joined(separator: "\n")
    }
}
