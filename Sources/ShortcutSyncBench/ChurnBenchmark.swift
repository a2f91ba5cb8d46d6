import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore
import Synchronization

/// `bench churn` (issue 56): what signing devices in and out, within each account's budget,
/// costs everyone else. A quiet account's devices pull one after another; their pull latency is
/// measured before, during and after `rounds` churn rounds (sign a device in, let it pull once,
/// sign it out) spread over as many accounts as the budget needs (`perAccount` rounds each, so
/// that none meets a 429). Every sign-out is a `NOTIFY` every server hears, a forgetting in its
/// token cache (which holds `warmDevices` other devices' tokens), an event and a `devices` row
/// left behind. The quiet account's pull p99 after the churn should be within 1.2× of before.
public struct ChurnBenchmark: Sendable {
    public struct Load: Sendable {
        public var rounds: Int
        public var perAccount: Int
        /// Churning accounts at work at once.
        public var concurrency: Int
        /// Pulls of the quiet account in each phase (before, after), by `pullers` devices at once.
        public var pulls: Int
        public var pullers: Int
        /// Devices that pull once at the start, so that the token cache holds their entries.
        public var warmDevices: Int

        public init(rounds: Int = 10_000, perAccount: Int = 30, concurrency: Int = 8, pulls: Int = 4_000, pullers: Int = 4, warmDevices: Int = 3_000) {
            self.rounds = rounds
            self.perAccount = perAccount
            self.concurrency = concurrency
            self.pulls = pulls
            self.pullers = pullers
            self.warmDevices = warmDevices
        }

        public static let smoke = Load(rounds: 100, perAccount: 30, concurrency: 4, pulls: 200, pullers: 2, warmDevices: 50)
    }

    /// The quiet account's pulls in one phase.
    public struct Pulls: Sendable, Codable {
        public var count: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
    }

    public struct Result: Sendable, Codable {
        public var rounds: Int
        public var accounts: Int
        /// Sign-ins and sign-outs answered 429 (none expected: each account stays within its budget).
        public var refused: Int
        public var churnSeconds: Double
        public var before: Pulls
        public var during: Pulls
        public var after: Pulls
        public var p99Ratio: Double { before.p99Milliseconds > 0 ? after.p99Milliseconds / before.p99Milliseconds : 0 }
    }

    let service: URL
    let adminToken: String
    let load: Load

    /// Runs on a fresh database of `server` (dropped afterwards) with the service as a child
    /// process, its sign-in budget at the defaults (30 at once, 30 an hour), pushes and reads unbudgeted.
    public static func run(server: DatabaseURL, load: Load, logger: Logger, report: @escaping @Sendable (String) -> Void) async throws -> Result {
        try await withFreshDatabase(on: server, logger: logger) { url in
            try await BenchService.with(database: url, workerProcess: false,
                                        extraArguments: ["--device-sign-ins-per-hour", "30", "--device-sign-in-burst", "30"]) { service in
                report("service: pid \(service.servicePID) on \(service.url.absoluteString), sign-ins' budget 30 at once, 30 an hour")
                let benchmark = ChurnBenchmark(service: service.url, adminToken: service.adminToken, load: load)
                return try await withBenchHTTPClient(connections: load.concurrency + load.pullers + 16) { http in
                    try await benchmark.measure(http: http, report: report)
                }
            }
        }
    }

    func measure(http: HTTPClient, report: @escaping @Sendable (String) -> Void) async throws -> Result {
        // The quiet account: a view of 200 shortcuts, and the devices that pull it.
        let quiet = try string(try await send(.POST, "/v1/accounts", token: adminToken, http: http), "accountToken")
        var pullers: [String] = []
        for index in 0..<load.pullers { pullers.append(try await signIn(quiet, name: "quiet \(index)", http: http).token) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let donations = (0..<200).map { index in
            #"{"id":"\#(UUID())","seq":\#(index + 1),"hlc":{"wallMillis":\#(now),"counter":\#(index)},"type":"donation","bundleId":"com.example.app","identifier":"item-\#(index)","kind":"userActivity","activityType":"com.example.open","title":"Item \#(index)"}"#
        }
        _ = try await send(.POST, "/v1/sync/push", token: pullers[0], body: #"{"events":[\#(donations.joined(separator: ","))]}"#, http: http)
        // Other devices whose tokens the cache holds, as a server's does.
        var warm = try string(try await send(.POST, "/v1/accounts", token: adminToken, http: http), "accountToken")
        for index in 0..<load.warmDevices {
            if index > 0, index % 30 == 0 { warm = try string(try await send(.POST, "/v1/accounts", token: adminToken, http: http), "accountToken") }
            let device = try await signIn(warm, name: "warm \(index)", http: http)
            _ = try await send(.GET, "/v1/sync/pull", token: device.token, http: http)
        }
        _ = try await pulls(pullers, count: load.pulls / 4, http: http)  // warm-up, not measured
        let before = try await pulls(pullers, count: load.pulls, http: http)
        report("  before: pull p50 \(format(before.p50Milliseconds)) ms, p99 \(format(before.p99Milliseconds)) ms")

        let started = ContinuousClock.now
        let quietDevices = pullers
        let pullTask = Task { try await pulls(quietDevices, count: Int.max, http: http) }
        let (accounts, refused) = try await churn(http: http)
        pullTask.cancel()
        let during = try await pullTask.value
        let churnSeconds = (ContinuousClock.now - started).inSeconds
        report("  \(load.rounds) rounds over \(accounts) accounts in \(format(churnSeconds)) s, \(refused) refused; "
            + "pulls during: p50 \(format(during.p50Milliseconds)) ms, p99 \(format(during.p99Milliseconds)) ms")
        let after = try await pulls(pullers, count: load.pulls, http: http)
        report("  after: pull p50 \(format(after.p50Milliseconds)) ms, p99 \(format(after.p99Milliseconds)) ms")
        return Result(rounds: load.rounds, accounts: accounts, refused: refused, churnSeconds: churnSeconds, before: before, during: during, after: after)
    }

    /// The churn: each account signs devices in and out `perAccount` times, `concurrency`
    /// accounts at once. Returns the accounts used and the requests refused with 429.
    private func churn(http: HTTPClient) async throws -> (accounts: Int, refused: Int) {
        let accounts = (load.rounds + load.perAccount - 1) / load.perAccount
        let next = ManagedCounter()
        let refused = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<load.concurrency {
                group.addTask {
                    var refused = 0
                    while let account = next.take(below: accounts) {
                        let token = try string(try await send(.POST, "/v1/accounts", token: adminToken, http: http), "accountToken")
                        let rounds = min(load.perAccount, load.rounds - account * load.perAccount)
                        for round in 0..<rounds {
                            guard let device = try? await signIn(token, name: "churn \(round)", http: http) else { refused += 1; continue }
                            _ = try await send(.GET, "/v1/sync/pull", token: device.token, http: http)
                            let status = try await status(.DELETE, "/v1/devices/\(device.id)", token: token, http: http)
                            if status == 429 { refused += 1 }
                        }
                    }
                    return refused
                }
            }
            return try await group.reduce(0, +)
        }
        return (accounts, refused)
    }

    /// `count` pulls of the whole view by the pullers at once (each its share), or until cancelled.
    private func pulls(_ pullers: [String], count: Int, http: HTTPClient) async throws -> Pulls {
        let histogram = try await withThrowingTaskGroup(of: Histogram<UInt64>.self) { group in
            for token in pullers {
                group.addTask {
                    var histogram = PushTally.newHistogram()
                    for _ in 0..<(count == Int.max ? Int.max : count / pullers.count) {
                        if Task.isCancelled { break }
                        let start = ContinuousClock.now
                        do {
                            _ = try await send(.GET, "/v1/sync/pull", token: token, http: http)
                        } catch where Task.isCancelled {
                            break  // the churn ended: the pull under way is not counted
                        }
                        histogram.record(UInt64(max(1, (ContinuousClock.now - start).inSeconds * 1_000_000)))
                    }
                    return histogram
                }
            }
            var all = PushTally.newHistogram()
            for try await part in group { all.add(part) }
            return all
        }
        return Pulls(count: Int(histogram.totalCount), p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                     p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000)
    }

    private func signIn(_ accountToken: String, name: String, http: HTTPClient) async throws -> (id: String, token: String) {
        let created = try await send(.POST, "/v1/devices", token: accountToken, body: #"{"name":"\#(name)","platform":"iOS"}"#, http: http)
        return (try string(created, "deviceId"), try string(created, "deviceToken"))
    }

    /// A request's JSON answer; anything but 2xx throws.
    private func send(_ method: HTTPMethod, _ path: String, token: String, body: String? = nil, http: HTTPClient) async throws -> [String: Any] {
        let (status, answer) = try await exchange(method, path, token: token, body: body, http: http)
        guard (200..<300).contains(status) else { throw BenchError("\(method) \(path) answered \(status): \(String(buffer: answer).prefix(300))") }
        return (try? JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any]) ?? [:]
    }

    private func status(_ method: HTTPMethod, _ path: String, token: String, http: HTTPClient) async throws -> UInt {
        try await exchange(method, path, token: token, body: nil, http: http).status
    }

    private func exchange(_ method: HTTPMethod, _ path: String, token: String, body: String?, http: HTTPClient) async throws -> (status: UInt, body: ByteBuffer) {
        let (status, answer) = try await WakeBenchClient(service: service, http: http).send(method, path, token: token, body: body)
        return (UInt(status), ByteBuffer(data: answer))
    }

    private func string(_ json: [String: Any], _ key: String) throws -> String {
        guard let value = json[key] as? String else { throw BenchError("the answer has no \(key)") }
        return value
    }

    private func format(_ value: Double) -> String { String(format: "%.1f", value) }
}

extension ChurnBenchmark.Result {
    public var table: String {
        func pulls(_ pulls: ChurnBenchmark.Pulls) -> String {
            String(format: "p50 %.1f ms, p99 %.1f ms (%d pulls)", pulls.p50Milliseconds, pulls.p99Milliseconds, pulls.count)
        }
        return [
            "| issue 56, sign-in churn within the budget | ours | target | |",
            "| --- | --- | --- | --- |",
            "| a quiet account's pulls (200 shortcuts), before | \(pulls(before)) | — | |",
            "| the same during \(rounds) churn rounds over \(accounts) accounts (\(String(format: "%.0f", churnSeconds)) s, \(refused) refused) | \(pulls(during)) | — | |",
            "| the same after | \(pulls(after)) | — | |",
            "| pull p99 after / before | " + String(format: "%.2f", p99Ratio) + " | ≤ 1.20 | \(p99Ratio <= 1.2 ? "met" : "**not met**") |",
        ].joined(separator: "\n")
    }
}

/// Hands out 0, 1, 2… to the churn's tasks, each number once.
private final class ManagedCounter: Sendable {
    private let next = Mutex(0)

    func take(below limit: Int) -> Int? {
        next.withLock { value in
            guard value < limit else { return nil }
            defer { value += 1 }
            return value
        }
    }
}
