import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import NIOCore
import NIOHTTP1
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// The real `serve` reaching its PostgreSQL through a proxy that fails as networks do (issue 64,
/// item 1; DESIGN §6): a black hole — every open connection silent, no answer, no FIN, no RST, for
/// 25 s, then new connections forwarded again while the old ones stay silent for good, as after a
/// failover behind a cloud endpoint — and a slow network. Through the black hole: every request
/// is answered within 2 s (503 with `Retry-After`); afterwards the service is ready within 30 s
/// without a restart, a stream opened before is poked to pull, pushes are acknowledged again,
/// every acknowledged event is in the views once, and `admin verify` passes.
@Suite(.serialized) struct NetworkFaultTests {
    @Test func theServiceLivesThroughABlackHole() async throws {
        try await withProxiedService("black-hole") { serve, proxy, directURL in
            var devices: [(account: UUID, token: String)] = []
            for _ in 0..<4 { devices.append(try await FaultTests.signIn(serve)) }
            // A device of an account of its own that pushes nothing: only the service's own poke
            // after the black hole (its LISTEN resumed, whatever was notified meanwhile lost) reaches it.
            let quiet = try await FaultTests.signIn(serve)
            let stream = try await Self.openStream(serve, token: quiet.token)
            defer { stream.task.cancel() }
            #expect(try await stream.recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"), "the stream opened")

            let faultBegan = ContinuousClock.now + .milliseconds(1500)
            let restored = Instant()
            let injecting = Task {
                try await Task.sleep(until: faultBegan)
                proxy.blackHole()
                try await Task.sleep(for: .seconds(25))
                proxy.restore()
                restored.now()
            }
            defer { injecting.cancel() }
            let outcomes: [PushesThroughAnOutage]
            do {
                outcomes = try await Self.pushUntilAcknowledgedAfter(restored, devices: devices, serve: serve, deadline: faultBegan + .seconds(120))
            } catch {
                // A push that had no answer at all: what the service said meanwhile is the clue.
                Issue.record("a push had no answer (\(error)), black hole from \(faultBegan), restored at \(String(describing: restored.instant)):\n\(serve.output)")
                throw error
            }
            try await injecting.value
            let restoredAt = try #require(restored.instant)

            #expect(serve.isRunning, "serve ended in the black hole:\n\(serve.output)")
            PushesThroughAnOutage.expectFailFast(outcomes, faultBegan: faultBegan, faultEnded: restoredAt)
            #expect(outcomes.map(\.refused).reduce(0, +) > 0, "the pushes met the black hole")
            #expect(outcomes.allSatisfy { $0.acknowledgedSentAt.contains { $0 > restoredAt } },
                    "every device was acknowledged again after the black hole")
            // Ready again by itself, within 30 s of the network's return.
            try await eventually("serve is ready within 30 s of the black hole's end", timeout: .seconds(30) - (ContinuousClock.now - restoredAt)) {
                (try? await sendRequest(.GET, serve.operatorURL + "/readyz", token: nil, timeout: .seconds(2)))?.status == 200
            }
            // What docs/benchmarks.md ("Back after a fault") reports: when the network's return
            // was followed by readiness and by every device's first acknowledged push.
            let firstAcknowledged = outcomes.compactMap { $0.acknowledgedSentAt.filter { $0 > restoredAt }.min() }.max()
            print("NetworkFaultTests: after a 25 s black hole, ready within \(ContinuousClock.now - restoredAt);",
                  "every device sent a push within \(firstAcknowledged.map { "\($0 - restoredAt)" } ?? "never") of the return that was acknowledged")
            let heard = try await stream.recorder.wait(timeout: .seconds(30)) { $0.contains("event: changed") }
            #expect(heard.contains("event: changed"), "the stream opened before the black hole was told to pull after it: \(heard)")
            #expect(!stream.recorder.hasEnded, "the stream lived through the black hole")
            try await Self.expectEveryAcknowledgedEventOnce(serve: serve, tokens: devices.map(\.token), outcomes: outcomes)
            let verify = try await CommandProcess.run(["admin", "verify", "--database-url", directURL])
            #expect(verify.exitStatus == 0, "admin verify after the black hole:\n\(verify.output)\(verify.errorOutput)")
        }
    }

    /// 150 ms each way on every packet changes nothing but latency: every push and pull is
    /// answered 200, the service stays ready (its heartbeat is answered well within its deadline),
    /// and every acknowledged event is in the views once.
    @Test func aSlowNetworkChangesNothingButLatency() async throws {
        try await withProxiedService("slow-network") { serve, proxy, directURL in
            var devices: [(account: UUID, token: String)] = []
            for _ in 0..<3 { devices.append(try await FaultTests.signIn(serve)) }
            proxy.setLatency(.milliseconds(150))
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for device in devices {
                    group.addTask {
                        var statuses: [Int] = []
                        for seq in 1...4 {
                            let push = try await sendRequest(.POST, serve.baseURL + "/v1/sync/push", token: device.token,
                                                             body: PushesThroughAnOutage.donation(seq), timeout: .seconds(20))
                            statuses.append(push.status)
                            let pull = try await sendRequest(.GET, serve.baseURL + "/v1/sync/pull", token: device.token, timeout: .seconds(20))
                            statuses.append(pull.status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == 24 && statuses.allSatisfy { $0 == 200 }, "every push and pull answered 200 on a slow network: \(statuses)")
            let ready = try await sendRequest(.GET, serve.operatorURL + "/readyz", token: nil, timeout: .seconds(10))
            #expect(ready.status == 200, "still ready: \(ready.json)")
            #expect(!serve.output.contains("did not answer the LISTEN connection's heartbeat"), "no heartbeat missed on a slow network:\n\(serve.output)")
            var outcomes: [PushesThroughAnOutage] = []
            for _ in devices {
                var outcome = PushesThroughAnOutage()
                outcome.acknowledged = 4
                outcomes.append(outcome)
            }
            proxy.setLatency(.zero)
            try await Self.expectEveryAcknowledgedEventOnce(serve: serve, tokens: devices.map(\.token), outcomes: outcomes)
            let verify = try await CommandProcess.run(["admin", "verify", "--database-url", directURL])
            #expect(verify.exitStatus == 0, "admin verify:\n\(verify.output)\(verify.errorOutput)")
        }
    }

    /// A cluster of its own, a proxy in front of it, and `serve` on the proxied URL; the body gets
    /// the service, the proxy and the database's direct URL. Everything is stopped afterwards.
    private func withProxiedService(
        _ purpose: String, _ body: (ServeProcess, NetworkFaultProxy, String) async throws -> Void
    ) async throws {
        try await withScratchCluster(purpose) { _, _, connection in
            let directURL = connection.url(database: "faults")
            try await DatabaseURL(directURL).createDatabaseIfMissing(logger: TestDatabase.shared.logger)
            let proxy = try await NetworkFaultProxy(port: connection.port)
            var proxied = try DatabaseURL(directURL)
            proxied.port = proxy.port
            do {
                let serve = try await ServeProcess(databaseURL: proxied.urlString)
                defer { serve.command.forceStop() }
                try await ShutdownTests.waitUntilReady(serve)
                try await body(serve, proxy, directURL)
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        }
    }

    /// Each device pushes a donation after another (a 503 sent again unchanged) until two of its
    /// pushes sent after `restored` were acknowledged, or until `deadline`.
    private static func pushUntilAcknowledgedAfter(
        _ restored: Instant, devices: [(account: UUID, token: String)], serve: ServeProcess, deadline: ContinuousClock.Instant
    ) async throws -> [PushesThroughAnOutage] {
        try await withThrowingTaskGroup(of: (Int, PushesThroughAnOutage).self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    let outcome = try await PushesThroughAnOutage.run(until: deadline, isDone: { outcome in
                        guard let ended = restored.instant else { return false }
                        return outcome.acknowledgedSentAt.count { $0 > ended } >= 2
                    }) { batch in
                        try await sendRequest(.POST, serve.baseURL + "/v1/sync/push", token: device.token, body: batch, timeout: .seconds(10))
                    }
                    return (index, outcome)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }.sorted { $0.key < $1.key }.map(\.value)
        }
    }

    /// Every acknowledged donation is in its device's view once, and none other.
    private static func expectEveryAcknowledgedEventOnce(serve: ServeProcess, tokens: [String], outcomes: [PushesThroughAnOutage]) async throws {
        for (token, outcome) in zip(tokens, outcomes) {
            let view = try await sendRequest(.GET, serve.baseURL + "/v1/sync/pull", token: token)
            #expect(view.status == 200)
            #expect(view.json["lastAcceptedSeq"] as? Int == outcome.acknowledged)
            let shortcuts = (view.json["shortcuts"] as? [String: Any])?["upserted"] as? [[String: Any]] ?? []
            #expect(Set(shortcuts.compactMap { $0["identifier"] as? String }) == Set((0..<outcome.acknowledged).map { "item-\($0 + 1)" }))
            #expect(shortcuts.allSatisfy { $0["donationCount"] as? Int == 1 }, "each acknowledged donation once")
        }
    }

    private static func openStream(_ serve: ServeProcess, token: String) async throws -> (recorder: StreamRecorder, task: Task<Void, any Error>) {
        var request = HTTPClientRequest(url: serve.baseURL + "/v1/sync/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let recorder = StreamRecorder()
        return (recorder, Task { try await recorder.record(response) })
    }
}

/// A moment, once it has come.
private final class Instant: Sendable {
    private let moment = Mutex<ContinuousClock.Instant?>(nil)

    var instant: ContinuousClock.Instant? { moment.withLock { $0 } }

    func now() {
        moment.withLock { $0 = .now }
    }
}
