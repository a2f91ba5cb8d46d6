import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `serve`, on a PostgreSQL of its own reached with a password as an operator runs it,
/// while devices push with the client library's retry rules and the database is restarted,
/// killed or stopped (issue "faults and crowds", DESIGN §5 and §8). Through each: the service
/// process lives; every answer is 200 or 503 with `Retry-After`, within 2 s while the database is
/// away (within 10 s once it is back, when the service meets a cold server); it is ready again
/// by itself; every acknowledged event is in the views exactly once; its LISTEN connection is
/// back (a stream opened afterwards is poked by a notification from elsewhere); `admin verify`
/// passes. One fault at a time: each runs a cluster and a service of its own.
@Suite(.serialized) struct FaultTests {
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `pg_ctl restart -m fast`: every session ends, the server is back within a second or two.
        case restart
        /// The postmaster killed with SIGKILL, then started again: crash recovery.
        case killedPostmaster
        /// `pg_ctl stop -m fast`, 20 s without a database, then started again.
        case stoppedFor20Seconds

        var testDescription: String { rawValue }
    }

    @Test(arguments: Fault.allCases)
    func theServiceLivesThroughTheFault(_ fault: Fault) async throws {
        try await withScratchCluster("fault") { cluster, directory, connection in
            try await Self.run(fault, cluster: cluster, directory: directory, connection: connection)
        }
    }

    private static func run(_ fault: Fault, cluster: EmbeddedPostgres, directory: URL, connection: EmbeddedPostgres.Connection) async throws {
        let url = connection.url(database: "faults")
        try await DatabaseURL(url).createDatabaseIfMissing(logger: TestDatabase.shared.logger)
        let serve = try await ServeProcess(databaseURL: url)
        defer { serve.command.forceStop() }
        try await ShutdownTests.waitUntilReady(serve)

        var devices: [(account: UUID, token: String)] = []
        for _ in 0..<6 { devices.append(try await signIn(serve)) }
        let tokens = devices.map(\.token)

        let faultEnded = FaultEnd()
        let faultAt = ContinuousClock.now + .milliseconds(1500)
        let injecting = Task {
            try await Task.sleep(until: faultAt)
            try await inject(fault, cluster: cluster, directory: directory, port: connection.port)
            faultEnded.now()
        }
        defer { injecting.cancel() }
        let deadline = faultAt + .seconds(120)
        let outcomes = try await withThrowingTaskGroup(of: (Int, PushesThroughAnOutage).self) { group in
            for (index, token) in tokens.enumerated() {
                group.addTask {
                    let outcome = try await PushesThroughAnOutage.run(until: deadline, isDone: { outcome in
                        // Two pushes sent after the database was back, and acknowledged.
                        guard let ended = faultEnded.instant else { return false }
                        return outcome.acknowledgedSentAt.count { $0 > ended } >= 2
                    }) { batch in
                        try await sendRequest(.POST, serve.baseURL + "/v1/sync/push", token: token, body: batch, timeout: .seconds(10))
                    }
                    return (index, outcome)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }.sorted { $0.key < $1.key }.map(\.value)
        }
        try await injecting.value

        #expect(serve.isRunning, "serve ended during the fault:\n\(serve.output)")
        PushesThroughAnOutage.expectFailFast(outcomes, faultBegan: faultAt, faultEnded: faultEnded.instant!)
        #expect(outcomes.allSatisfy { $0.acknowledgedSentAt.count { $0 > faultEnded.instant! } >= 2 },
                "every device was acknowledged again after the fault")
        if fault != .restart {
            #expect(outcomes.map(\.refused).reduce(0, +) > 0, "the pushes met the outage")
        }
        // Ready again by itself.
        try await eventually("serve is ready again", timeout: .seconds(30)) {
            (try? await sendRequest(.GET, serve.operatorURL + "/readyz", token: nil, timeout: .seconds(2)))?.status == 200
        }
        // Every acknowledged event once, in the device's own view.
        for (token, outcome) in zip(tokens, outcomes) {
            let view = try await sendRequest(.GET, serve.baseURL + "/v1/sync/pull", token: token)
            #expect(view.json["lastAcceptedSeq"] as? Int == outcome.acknowledged)
            let shortcuts = (view.json["shortcuts"] as? [String: Any])?["upserted"] as? [[String: Any]] ?? []
            #expect(Set(shortcuts.compactMap { $0["identifier"] as? String }) == Set((0..<outcome.acknowledged).map { "item-\($0 + 1)" }))
            #expect(shortcuts.allSatisfy { $0["donationCount"] as? Int == 1 }, "each acknowledged donation once")
        }
        try await expectListenIsBack(serve: serve, device: devices[0], databaseURL: url)
        let verify = try await CommandProcess.run(["admin", "verify", "--database-url", url])
        #expect(verify.exitStatus == 0, "admin verify after the fault:\n\(verify.output)\(verify.errorOutput)")
    }

    private static func inject(_ fault: Fault, cluster: EmbeddedPostgres, directory: URL, port: Int) async throws {
        switch fault {
        case .restart:
            try await cluster.restart()
        case .killedPostmaster:
            let postmaster = try #require(Postmaster.running(dataDirectory: directory))
            kill(postmaster, SIGKILL)
            #expect(try await CommandProcess.waitUntilEnded(postmaster))
            // What this process knows of the cluster goes (its `pg_ctl stop` finds no server);
            // the next start recovers from the crash once the killed server's sessions have ended.
            await cluster.stop()
            try await eventually("PostgreSQL starts again after the crash", timeout: .seconds(60)) {
                (try? await cluster.start(preferredPort: port)) != nil
            }
        case .stoppedFor20Seconds:
            await cluster.stop()
            try await Task.sleep(for: .seconds(20))
            _ = try await cluster.start(preferredPort: port)
        }
    }

    /// A stream opened after the fault is poked by a change another process announces (a
    /// `NOTIFY` sent here, as another server would): serve's LISTEN connection is back.
    private static func expectListenIsBack(serve: ServeProcess, device: (account: UUID, token: String), databaseURL: String) async throws {
        var request = HTTPClientRequest(url: serve.baseURL + "/v1/sync/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(device.token)")
        let stream = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let recorder = StreamRecorder()
        let recording = Task { try await recorder.record(stream) }
        defer { recording.cancel() }
        #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"), "the stream opened")

        let logger = TestDatabase.shared.logger
        try await DatabaseURL(databaseURL).withSingleConnection(logger: logger) { connection in
            for payload in ProjectionNotification.payloads(sender: nil, versions: [device.account: 1_000_000]) {
                try await connection.guardedQuery("SELECT pg_notify(\(ProjectionNotification.channel), \(payload))", logger: logger)
            }
        }
        let heard = try await recorder.wait { $0.contains("1000000") }
        #expect(heard.contains("event: changed") && heard.contains("1000000"), "the stream was poked by the notification: \(heard)")
    }

    /// A new account with one device on the running service: the account's id and the device's token.
    static func signIn(_ serve: ServeProcess) async throws -> (account: UUID, token: String) {
        let account = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken)
        let accountID = try #require((account.json["accountId"] as? String).flatMap(UUID.init(uuidString:)))
        let accountToken = try #require(account.json["accountToken"] as? String)
        let device = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/devices", token: accountToken,
                                                     json: #"{"name":"iPhone","platform":"iOS"}"#)
        return (accountID, try #require(device.json["deviceToken"] as? String))
    }
}

/// When the fault ended (the database back), once it has.
private final class FaultEnd: Sendable {
    private let ended = Mutex<ContinuousClock.Instant?>(nil)

    var instant: ContinuousClock.Instant? { ended.withLock { $0 } }

    func now() {
        ended.withLock { $0 = .now }
    }
}
