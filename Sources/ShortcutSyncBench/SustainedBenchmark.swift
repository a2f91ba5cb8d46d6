import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// `bench sustained`: DESIGN §8's sustained pushes from many accounts at once, in 10-event
/// batches as live traffic interleaves them. It finds the rate the service sustains, then offers
/// 80 % of it and measures, beside that load, how long one device's push takes to reach another
/// device's pull, woken by its stream; at the end every device's view must show every event
/// whose push was acknowledged.
///
/// Each load account has a pusher and a reader whose stream stays open, so that pokes flow as
/// they do live; a few sample accounts, alike, take the latency samples alone. Pushes that fail
/// (`429`, `503`, no answer) are counted and sent again unchanged, as a device's outbox does, so
/// that a retry stores nothing twice and the views can be checked exactly.
public struct SustainedBenchmark: Sendable {
    /// How wide and how long the run is.
    public struct Load: Sendable {
        /// Accounts pushing at once, each with a pusher and a reader.
        public var accounts: Int
        /// Further accounts, a pusher and a reader each, that only take latency samples.
        public var sampleAccounts: Int
        /// How long each phase (the sustained run, the 80 % run) lasts.
        public var duration: Duration
        /// The share of the sustained rate the second phase offers (DESIGN §8: 0.8).
        public var share: Double

        public init(accounts: Int = 1000, sampleAccounts: Int = 20, duration: Duration = .seconds(20), share: Double = 0.8) {
            self.accounts = accounts
            self.sampleAccounts = sampleAccounts
            self.duration = duration
            self.share = share
        }

        /// A short run, to check that it works: 50 accounts, 5 sample accounts, 2 s per phase.
        public static let smoke = Load(accounts: 50, sampleAccounts: 5, duration: .seconds(2))
    }

    /// The pushes of one phase.
    public struct Pushes: Sendable, Hashable, Codable {
        /// Events acknowledged (answered 200).
        public var events: Int
        /// Pushes acknowledged.
        public var pushes: Int
        /// From the first push to the last answer.
        public var seconds: Double
        public var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
        public var pushesPerSecond: Double { seconds > 0 ? Double(pushes) / seconds : 0 }
        public var pushP50Milliseconds: Double
        public var pushP99Milliseconds: Double
        /// The longest any answer took, acknowledged or not.
        public var pushMaxMilliseconds: Double
        /// Pushes not acknowledged (sent again unchanged), by status; "no answer" for none.
        public var failures: [String: Int]
        public var failedPushes: Int { failures.values.reduce(0, +) }
    }

    /// Push on one device → seen in another device's pull, woken by its stream.
    public struct Latency: Sendable, Hashable, Codable {
        public var samples: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        /// Samples whose first pull after both the acknowledgement and the poke lacked the event.
        public var missed: Int
        /// Sample pushes not acknowledged at first (sent again; their samples count from the first try).
        public var failedPushes: Int
    }

    /// Every load account's devices pull their whole view after the run.
    public struct Views: Sendable, Hashable, Codable {
        public var accounts: Int
        public var views: Int
        /// Accounts whose view (any device's) lacked an acknowledged event.
        public var lacking: Int
        /// Accounts whose view showed more donations than were pushed (a push stored twice).
        public var surplus: Int
    }

    public struct Result: Sendable, Codable {
        public var accounts: Int
        public var sampleAccounts: Int
        public var batch: Int
        /// Closed loop: every load account's pusher pushes back to back.
        public var sustained: Pushes
        /// Open loop at `share` of the sustained rate.
        public var loaded: Pushes
        /// The rate the open loop was asked to offer, events per second.
        public var offeredEventsPerSecond: Double
        /// The share of the sustained rate it was asked to offer.
        public var share: Double
        public var latency: Latency
        public var views: Views
        /// The CPU the load generator (the bench's own process) and the service used during phase
        /// 2, in cores (CPU seconds a second), where known: what the load itself took from the
        /// machine it measures.
        public var loadGeneratorCores: Double?
        public var serviceCores: Double?
        /// What the service measured itself during phase 2: commit → poke delivered on a stream,
        /// from its histogram on `/metrics` (issue 33), beside `latency` measured from outside.
        var serviceFreshness: ServiceHistogram?
        /// What the service measured itself of the pushes it answered 200 during phase 2, from
        /// its head to its answer (its request histogram on `/metrics`), beside `loaded`'s push
        /// times measured from outside: tells a delay in the service from one before or after it.
        var servicePushes: ServiceHistogram?
        /// The longest flush of the database's disk during phase 2, and the flushes over 20 ms
        /// (`FlushProbe`), when the bench had a probe on that disk.
        public var longestFlushMilliseconds: Double?
        public var flushStalls: Int?
    }

    /// Events per load push (DESIGN §8).
    static let batch = 10
    /// Distinct identifiers per load account (`load-0`…), far below `Limits.maxShortcutsPerAccount`.
    static let loadIdentifiers = 100
    /// Distinct identifiers per sample account (`sample-0`…), reused cyclically in long runs.
    static let sampleIdentifiers = 5000
    /// How often each sample account takes a sample.
    static let sampleIntervalMilliseconds = 500
    /// The latency target (DESIGN §8).
    static let targetMilliseconds = 100.0
    /// Past capacity (a share above 1; DESIGN §8 offers 150 %), every answer comes within this,
    /// and is a `200` or a `503` (with `Retry-After`, the service's shedding).
    static let answerBoundMilliseconds = 2000.0

    let service: URL
    let adminToken: String
    let load: Load
    let logger: Logger
    var report: @Sendable (String) -> Void = { _ in }

    init(service: URL, adminToken: String, load: Load, logger: Logger) {
        self.service = service
        self.adminToken = adminToken
        self.load = load
        self.logger = logger
    }

    // MARK: HTTP

    /// A push's answer: its status (nil when none came) and the account's version after it.
    struct PushAnswer: Sendable {
        var status: UInt?
        var version: Int64?
        /// A refusal (`429`, `503`) that did not say when to come back.
        var lacksRetryAfter = false
        var accepted: Bool { status == 200 }
        var failure: String { status.map { "\($0)" + (lacksRetryAfter ? " without Retry-After" : "") } ?? "no answer" }
    }

    /// Sends one push. An error status or a lost answer is returned, not thrown: under load they
    /// are figures to report. A `4xx` other than `429` is the bench's or the service's defect and is thrown.
    func push(_ body: String, token: String, http: HTTPClient) async throws -> PushAnswer {
        let request = pushRequest(service: service, token: token, body: body)
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(30))
            answer = try await response.body.collect(upTo: 1 << 20)
        } catch {
            if Task.isCancelled { throw error }
            return PushAnswer(status: nil, version: nil)
        }
        let status = response.status.code
        if (400..<500).contains(status) && status != 429 {
            throw BenchError("a push answered \(status): \(String(buffer: answer))")
        }
        guard status == 200 else {
            return PushAnswer(status: status, version: nil, lacksRetryAfter: response.headers.first(name: "Retry-After") == nil)
        }
        let json = try? JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any]
        guard let version = json?["version"] as? Int else {
            throw BenchError("a push answered 200 without a version: \(String(buffer: answer))")
        }
        return PushAnswer(status: status, version: Int64(version))
    }

    func pull(_ token: String, cursor: String?, http: HTTPClient) async throws -> (donations: [String: Int], cursor: String?) {
        try await pullPages(service: service, token: token, cursor: cursor, http: http)
    }

    /// Holds a device's stream open until cancelled; with `board`, tells it of every
    /// `event: changed` and its version (the load readers' streams are only drained).
    func listen(_ token: String, index: Int, board: StreamBoard, recordVersions: Bool, http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: service.absoluteString + "/v1/sync/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .hours(2))
        guard response.status.code == 200 else { throw BenchError("a stream answered \(response.status.code)") }
        await board.opened()
        var unread = ""
        for try await chunk in response.body {
            guard recordVersions else { continue }
            unread += String(buffer: chunk)
            while let end = unread.range(of: "\n\n") {
                let message = unread[..<end.lowerBound]
                if let version = Self.changedVersion(in: message) { await board.changed(index, version: version) }
                unread = String(unread[end.upperBound...])
            }
        }
    }

    /// The version of an SSE message `event: changed` / `data: {"version": N}`; nil for others.
    static func changedVersion(in message: Substring) -> Int64? {
        guard message.contains("event: changed") else { return nil }
        for line in message.split(separator: "\n") where line.hasPrefix("data:") {
            return Int64(String(line.drop { !$0.isNumber }.prefix { $0.isNumber }))
        }
        return nil
    }
}

extension SustainedBenchmark.Result {
    /// One line per figure of DESIGN §8's sustained target.
    public var table: String {
        func count(_ value: Double) -> String { Int(value.rounded()).formatted(.number.grouping(.automatic)) }
        func milliseconds(_ pushes: SustainedBenchmark.Pushes) -> String {
            String(format: "push p50 %.1f ms, p99 %.1f ms", pushes.pushP50Milliseconds, pushes.pushP99Milliseconds)
        }
        func failed(_ pushes: SustainedBenchmark.Pushes) -> String {
            guard pushes.failedPushes > 0 else { return "0 failed" }
            let statuses = pushes.failures.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
            return "**\(pushes.failedPushes) failed** (\(statuses))"
        }
        func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
        let percent = Int((share * 100).rounded())
        // What the pushers sent, acknowledged or not (a refused batch is sent again, and counts again).
        let offered = loaded.seconds > 0 ? Double((loaded.pushes + loaded.failedPushes) * batch) / loaded.seconds : 0
        let offeredShare = offeredEventsPerSecond > 0 ? offered / offeredEventsPerSecond : 0
        let latencyMet = latency.p99Milliseconds <= SustainedBenchmark.targetMilliseconds
        // Past capacity the push → pull target does not hold; the answers' bound does.
        let pastCapacity = share > 1
        var lines = ["| DESIGN §8, sustained pushes | ours | target | |",
                     "| --- | --- | --- | --- |"]
        lines.append("| sustained rate: \(count(Double(accounts))) accounts pushing \(batch)-event batches back to back | "
            + "**\(count(sustained.eventsPerSecond)) events/s** (\(count(sustained.pushesPerSecond)) pushes/s), "
            + "\(milliseconds(sustained)), \(failed(sustained)) | report it | |")
        lines.append("| \(percent) % of it, each account on its own schedule | offered \(count(offered)) events/s "
            + String(format: "(%.0f %% of the %@ asked)", offeredShare * 100, count(offeredEventsPerSecond))
            + (loaded.failedPushes > 0 ? ", acknowledged \(count(loaded.eventsPerSecond)) events/s" : "")
            + ", \(milliseconds(loaded)), \(failed(loaded)) | — | |")
        lines.append("| push → another device's pull, woken by its stream, at \(percent) % | "
            + String(format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", latency.p50Milliseconds, latency.p99Milliseconds, latency.maxMilliseconds)
            + " (\(latency.samples) samples of \(sampleAccounts) accounts" + (latency.failedPushes > 0 ? ", \(latency.failedPushes) pushes retried" : "")
            + (pastCapacity ? ") | — (past capacity) | |" : ") | p99 ≤ \(Int(SustainedBenchmark.targetMilliseconds)) ms | \(verdict(latencyMet)) |"))
        if pastCapacity {
            let longest = loaded.pushMaxMilliseconds
            let onlyShed = loaded.failures.keys.allSatisfy { $0 == "503" }
            lines.append("| every answer at \(percent) % within \(Int(SustainedBenchmark.answerBoundMilliseconds / 1000)) s, each 200 or 503 | "
                + String(format: "the longest %.1f ms; ", longest) + "\(count(Double(loaded.pushes))) × 200"
                + loaded.failures.sorted { $0.key < $1.key }.map { ", \($0.value) × \($0.key)" }.joined()
                + " | ≤ \(Int(SustainedBenchmark.answerBoundMilliseconds)) ms, 200 or 503 | "
                + "\(verdict(longest <= SustainedBenchmark.answerBoundMilliseconds && onlyShed)) |")
        }
        if let freshness = serviceFreshness {
            lines.append("| the service's own measure at \(percent) %: commit → poke delivered on a stream (its histogram) | "
                + String(format: "p50 %.1f ms, p99 %.1f ms", freshness.p50Milliseconds, freshness.p99Milliseconds)
                + " (\(freshness.samples) pokes, estimated within its buckets) | — | |")
        }
        if let pushes = servicePushes {
            lines.append("| the service's own measure at \(percent) %: a push answered 200, from its head to its answer (its histogram) | "
                + String(format: "p50 %.1f ms, p99 %.1f ms", pushes.p50Milliseconds, pushes.p99Milliseconds)
                + " (\(pushes.samples) pushes, estimated within its buckets) | — | |")
        }
        if let longest = longestFlushMilliseconds, let stalls = flushStalls {
            lines.append("| the database's disk during the \(percent) % phase: \(FlushProbe.what) | " + String(format: "longest %.1f ms", longest)
                + ", \(stalls) over \(FlushProbe.stallMilliseconds) ms | — | |")
        }
        if let generator = loadGeneratorCores {
            lines.append("| CPU during the \(percent) % phase | "
                + String(format: "the load generator %.2f cores, the service %@, of %d", generator,
                         serviceCores.map { String(format: "%.2f cores", $0) } ?? "?", ProcessInfo.processInfo.activeProcessorCount)
                + " | — | |")
        }
        lines.append("| every acknowledged event in every device's next pull | \(count(Double(views.accounts))) accounts' "
            + "\(count(Double(views.views))) views pulled from scratch: \(views.lacking) lacking, \(views.surplus) with extra donations; "
            + "\(latency.missed) of \(latency.samples) samples' first pull missed the event | 0, 0, 0 | "
            + "\(verdict(views.lacking == 0 && views.surplus == 0 && latency.missed == 0)) |")
        return lines.joined(separator: "\n")
    }
}
