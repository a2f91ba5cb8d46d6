import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The lifetime of the real `shortcut-sync serve` process and of the embedded PostgreSQL it
/// starts (DESIGN §5, "SIGTERM"): each test runs the executable as a child process.
@Suite struct ShutdownTests {
    static func dataDirectory() -> URL {
        URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-serve-\(UUID().uuidString.prefix(8))")
    }

    /// Waits until the service answers `/readyz` with 200.
    static func waitUntilReady(_ serve: ServeProcess) async throws {
        try await eventually("serve is ready:\n\(serve.output)", timeout: .seconds(120)) {
            // One that ended will never be ready: say so at once, with what it printed.
            guard serve.isRunning else {
                Issue.record("serve ended (status \(serve.exitStatus.map(String.init) ?? "?")) before it was ready:\n\(serve.output)")
                throw CancellationError()
            }
            let answer = try? await Self.request(.GET, serve.operatorURL + "/readyz", timeout: .seconds(2))
            return answer?.status == 200
        }
    }

    static func request(
        _ method: HTTPMethod, _ url: String, token: String? = nil, json: String? = nil, timeout: TimeAmount = .seconds(30)
    ) async throws -> (status: Int, json: [String: Any]) {
        let answer = try await sendRequest(method, url, token: token, body: json.map { Array($0.utf8) }, timeout: timeout)
        return (answer.status, answer.json)
    }

    /// The running service's `/metrics` text.
    static func metrics(_ operatorURL: String) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: operatorURL + "/metrics"), timeout: .seconds(10))
        return String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    /// A new account and device on the running service: the device's token.
    static func signIn(_ serve: ServeProcess) async throws -> String {
        let account = try await request(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken)
        let accountToken = try #require(account.json["accountToken"] as? String)
        let device = try await request(.POST, serve.baseURL + "/v1/devices", token: accountToken, json: #"{"name":"iPhone","platform":"iOS"}"#)
        return try #require(device.json["deviceToken"] as? String)
    }

    @Test func sigtermWithAnOpenStreamAndAWaitingPullEndsWithinTenSecondsAndStopsItsPostgres() async throws {
        let serve = try await ServeProcess(dataDirectory: Self.dataDirectory(), arguments: ["--no-worker"])
        defer { serve.forceStop() }
        try await Self.waitUntilReady(serve)
        let device = try await Self.signIn(serve)
        let pushed = try await Self.request(.POST, serve.baseURL + "/v1/sync/push", token: device,
                                            json: InputLimitTests.push([InputLimitTests.event(seq: 1)]).string)
        let version = try #require(pushed.json["version"] as? Int)
        let postmaster = try #require(serve.postmaster)

        var streamRequest = HTTPClientRequest(url: serve.baseURL + "/v1/sync/stream")
        streamRequest.headers.add(name: "Authorization", value: "Bearer \(device)")
        let stream = try await HTTPClient.shared.execute(streamRequest, timeout: .seconds(60))
        let recorder = StreamRecorder()
        try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                try await recorder.record(stream)
                return "stream ended"
            }
            group.addTask {
                // The next version: no push brings it, so the pull waits until the shutdown answers it.
                let answer = try await Self.request(.GET, serve.baseURL + "/v1/sync/pull?waitFor=\(version + 1)&timeout=30000", token: device)
                return "pull answered \(answer.status)"
            }
            #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
            try await eventually("the pull waits") {
                try await Self.metrics(serve.operatorURL).contains("shortcut_sync_waiting_pulls 1")
            }

            serve.send(SIGTERM)
            let took = try await serve.waitForExit(timeout: .seconds(15))
            #expect(took != nil && took! < .seconds(10), "serve took \(String(describing: took)) to exit:\n\(serve.output)")
            var ended: [String] = []
            for try await outcome in group { ended.append(outcome) }
            #expect(ended.sorted() == ["pull answered 200", "stream ended"])
        }
        #expect(serve.exitStatus == 0, "\(serve.output)")
        #expect(try await CommandProcess.waitUntilEnded(postmaster), "the embedded PostgreSQL still runs after serve ended")
    }

    @Test func aClusterLeftRunningByAKilledServeIsTakenOverByTheNextOne() async throws {
        let directory = Self.dataDirectory()
        let first = try await ServeProcess(dataDirectory: directory)
        defer { first.forceStop() }
        try await Self.waitUntilReady(first)
        let postmaster = try #require(first.postmaster)
        first.send(SIGKILL)
        #expect(try await first.waitForExit(timeout: .seconds(10)) != nil)
        #expect(EmbeddedPostgres.isRunning(postmaster), "a killed serve cannot stop its cluster")

        let second = try await ServeProcess(dataDirectory: directory)
        defer { second.forceStop() }
        try await Self.waitUntilReady(second)
        #expect(second.postmaster == postmaster, "the next serve reuses the running cluster")
        _ = try await Self.signIn(second)

        second.send(SIGTERM)
        let took = try await second.waitForExit(timeout: .seconds(15))
        #expect(took != nil && took! < .seconds(10), "\(second.output)")
        #expect(second.exitStatus == 0, "\(second.output)")
        #expect(try await CommandProcess.waitUntilEnded(postmaster), "the serve that took the cluster over stops it:\n\(second.output)")
    }
}

extension Array where Element == UInt8 {
    var string: String { String(decoding: self, as: UTF8.self) }
}
