import APNsStandIn
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// `bench wake` (DESIGN §8: "a device with no stream is woken ≤ 10 s after a change, at most once
/// per 20 minutes"): the real `serve` as a child process, with its APNs key and the local stand-in
/// given as an operator gives them (`--apns-key-file`, `--apns-url`, `--apns-ca-file`); accounts
/// of two devices, one that changes something and one asleep with a push token. It measures the
/// time from each change's acknowledgement to the stand-in receiving the wake, then changes every
/// account again and counts the wakes sent within the interval (the target: none).
public struct WakeBenchmark: Sendable {
    public struct Load: Sendable {
        /// Accounts, each with a device that changes and one asleep.
        public var accounts: Int
        /// How long the second round waits for wakes that should not come.
        public var quietWait: Duration

        public init(accounts: Int = 50, quietWait: Duration = .seconds(8)) {
            self.accounts = accounts
            self.quietWait = quietWait
        }

        public static let smoke = Load(accounts: 5, quietWait: .seconds(5))
    }

    public struct Result: Sendable, Codable {
        public var accounts: Int
        /// The service's wake delay and interval (its defaults).
        public var delaySeconds: Double
        public var intervalSeconds: Double
        public var p50Seconds: Double
        public var p99Seconds: Double
        public var maxSeconds: Double
        /// Wakes the stand-in received for the second change of each account, within the interval.
        public var wakesWithinInterval: Int
        /// Wakes received in all (the first round's and any of the second's).
        public var wakesReceived: Int

        public var table: String {
            let met = maxSeconds <= 10 && wakesWithinInterval == 0
            return """
                | DESIGN §8 | ours | target | |
                | --- | --- | --- | --- |
                | background wake: change → wake at the APNs stand-in, \(accounts) sleeping devices (delay \(String(format: "%.0f", delaySeconds)) s) | \
                p50 \(String(format: "%.2f", p50Seconds)) s, p99 \(String(format: "%.2f", p99Seconds)) s, max \(String(format: "%.2f", maxSeconds)) s; \
                \(wakesWithinInterval) second wake(s) within \(String(format: "%.0f", intervalSeconds / 60)) min | ≤ 10 s, at most once per 20 min | \(met ? "met" : "**not met**") |
                """
        }
    }

    /// Runs on a fresh database of `server` (dropped afterwards) with the service as a child process
    /// and the stand-in in this process.
    public static func run(server: DatabaseURL, load: Load, logger: Logger, report: @escaping @Sendable (String) -> Void) async throws -> Result {
        try await APNsStandIn.withStandIn { standIn in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-bench-wake-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(at: directory) }
            let keyFile = directory.appendingPathComponent("AuthKey_\(standIn.key.keyID).p8")
            let authorityFile = directory.appendingPathComponent("stand-in-authority.pem")
            guard FileManager.default.createFile(atPath: keyFile.path, contents: Data(standIn.key.privateKeyPEM.utf8), attributes: [.posixPermissions: 0o600]),
                  FileManager.default.createFile(atPath: authorityFile.path, contents: Data(standIn.authorityPEM.utf8)) else {
                throw BenchError("could not write the stand-in's key and certificate under \(directory.path)")
            }
            return try await withFreshDatabase(on: server, logger: logger) { url in
                try await BenchService.with(database: url, workerProcess: false, extraArguments: [
                    "--apns-key-file", keyFile.path, "--apns-key-id", standIn.key.keyID, "--apns-team-id", standIn.key.teamID,
                    "--apns-url", standIn.url.absoluteString, "--apns-ca-file", authorityFile.path, "--apns-topic", "com.example.soup",
                ]) { service in
                    report("service: pid \(service.servicePID) on \(service.url.absoluteString), APNs stand-in on \(standIn.url.absoluteString)")
                    return try await measure(service: service, standIn: standIn, load: load, report: report)
                }
            }
        }
    }

    private static func measure(service: BenchService, standIn: APNsStandIn, load: Load,
                                report: @escaping @Sendable (String) -> Void) async throws -> Result {
        try await withBenchHTTPClient(connections: load.accounts * 2 + 64) { http in
            try await measure(client: WakeBenchClient(service: service.url, http: http), service: service,
                              standIn: standIn, load: load, report: report)
        }
    }

    private static func measure(client: WakeBenchClient, service: BenchService, standIn: APNsStandIn, load: Load,
                                report: @escaping @Sendable (String) -> Void) async throws -> Result {
        var homes: [(phone: String, token: String)] = []
        for _ in 0..<load.accounts {
            let account = try await client.post("/v1/accounts", token: service.adminToken, body: nil)["accountToken"] as? String ?? ""
            let phone = try await client.post("/v1/devices", token: account, body: #"{"name":"iPhone","platform":"iOS"}"#)["deviceToken"] as? String ?? ""
            let pad = try await client.post("/v1/devices", token: account, body: #"{"name":"iPad","platform":"iPadOS"}"#)["deviceToken"] as? String ?? ""
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            try await client.put("/v1/device/push-token", token: pad,
                                 body: #"{"service":"apns","token":"\#(token)","topic":"com.example.soup","environment":"production"}"#)
            homes.append((phone, token))
        }
        // Round 1: each phone changes its account, a little apart; the time of each acknowledgement.
        var acknowledged: [String: Date] = [:]
        for home in homes {
            try await client.pushDonation(token: home.phone, seq: 1)
            acknowledged[home.token] = Date()
            try await Task.sleep(for: .milliseconds(50))
        }
        let first = try await standIn.waitForRequests(homes.count, within: .seconds(60))
        var latencies: [Double] = []
        for request in first where request.status == 200 {
            if let sent = acknowledged[request.deviceToken] { latencies.append(request.receivedAt.timeIntervalSince(sent)) }
        }
        latencies.sort()
        guard !latencies.isEmpty else { throw BenchError("no wake was delivered") }
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)] }
        report(String(format: "  first changes: %d wakes, p50 %.2f s, p99 %.2f s", latencies.count, percentile(0.5), percentile(0.99)))
        let refused = first.filter { $0.status != 200 }
        if !refused.isEmpty {
            report("  refused by the stand-in: " + refused.map { "\($0.status) \($0.reason ?? "")" }.joined(separator: ", "))
        }
        // Round 2: every account changes again within the interval: no wake may follow.
        for home in homes { try await client.pushDonation(token: home.phone, seq: 2) }
        try await Task.sleep(for: load.quietWait)
        let all = standIn.received
        report("  second changes: \(all.count - first.count) wakes within the interval")
        return Result(accounts: homes.count, delaySeconds: 3, intervalSeconds: 1200, p50Seconds: percentile(0.5), p99Seconds: percentile(0.99),
                      maxSeconds: latencies.last ?? 0, wakesWithinInterval: all.count - first.count, wakesReceived: all.count)
    }
}
