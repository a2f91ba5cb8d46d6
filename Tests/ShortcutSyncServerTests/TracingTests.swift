import APNsStandIn
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import ShortcutSyncChildProcess
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// Traces (issue 33): a real `serve --otel-endpoint` exports its spans over OTLP/HTTP to a
/// receiver in this test, which decodes them as a collector would; one change is one trace, from
/// the phone's push to the Mac's pull and the iPad's background wake.
@Suite struct TracingTests {
    /// A phone that traces pushes (its `traceparent` on the request); the Mac, on the client
    /// library, is poked on its stream and pulls; the iPad, asleep, is woken through APNs. Every
    /// span of it is in the phone's trace, each under the one that caused it.
    @Test func aPushAndTheOtherDevicesPullAndWakeAreOneConnectedTrace() async throws {
        try await OTLPReceiver.with { receiver in try await APNsStandIn.withStandIn { standIn in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-tracing-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyFile = folder.appendingPathComponent("AuthKey_\(standIn.key.keyID).p8")
            let authorityFile = folder.appendingPathComponent("stand-in-authority.pem")
            try #require(FileManager.default.createFile(atPath: keyFile.path, contents: Data(standIn.key.privateKeyPEM.utf8),
                                                        attributes: [.posixPermissions: 0o600]))
            try #require(FileManager.default.createFile(atPath: authorityFile.path, contents: Data(standIn.authorityPEM.utf8)))

            let database = try await TestDatabase.shared.freshDatabase()
            let serve = try await ServeProcess(databaseURL: database.urlString, arguments: [
                "--otel-endpoint", receiver.baseURL,
                "--apns-key-file", keyFile.path, "--apns-key-id", standIn.key.keyID, "--apns-team-id", standIn.key.teamID,
                "--apns-url", standIn.url.absoluteString, "--apns-ca-file", authorityFile.path, "--apns-topic", "com.example.soup",
                "--wake-delay", "0.5",
            ], environment: ["OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": nil, "OTEL_EXPORTER_OTLP_ENDPOINT": nil])
            defer { serve.command.forceStop() }
            try await ShutdownTests.waitUntilReady(serve)

            let (phone, mac, accountToken) = try await Self.phoneAndMac(serve)
            let pad = try await Self.device("iPad", "iPadOS", of: accountToken, on: serve)
            let apnsToken = String(repeating: "ab", count: 32)
            #expect(try await ShutdownTests.request(.PUT, serve.baseURL + "/v1/device/push-token", token: pad,
                                                    json: #"{"service":"apns","token":"\#(apnsToken)","topic":"com.example.soup","environment":"production"}"#).status == 204)

            // The phone's push is in a trace of its own app's (as a device that traces sends it).
            let (phoneTrace, phoneSpan) = (Self.randomHex(bytes: 16), Self.randomHex(bytes: 8))
            try await Self.withMac(on: serve, token: mac, receiver: receiver) {
                try await Self.push(to: serve, token: phone, trace: phoneTrace, span: phoneSpan)
            } then: {
                let woken = try await standIn.waitForRequests(1, within: .seconds(60))
                #expect(woken.first?.status == 200)
            }

            // Everything of the trace, once the service has sent it (every 100 ms).
            let trace = try await Self.spans(of: phoneTrace, in: receiver) { spans in
                spans.contains { $0.name == "wake" } && spans.contains { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }
                    && spans.contains { $0.name == "announce" } && spans.contains { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/push" }
            }
            #expect(receiver.refusals.isEmpty, "\(receiver.refusals)")
            func child(of parent: ReceivedSpan, _ matches: (ReceivedSpan) -> Bool) -> ReceivedSpan? {
                trace.first { $0.parentSpanID == parent.spanID && matches($0) }
            }
            let push = try #require(trace.first { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/push" }, "\(trace)")
            #expect(push.parentSpanID == phoneSpan, "the push continues the phone's span")
            #expect(push.attributes["http.response.status_code"] == "200")
            #expect(push.service == "shortcut-sync")
            // Its statements: the optimistic push reads, folds and writes.
            let read = try #require(child(of: push) { $0.name == "push: read the head and the rows to fold" }, "\(trace)")
            #expect(read.kind == 3 && read.attributes["db.system.name"] == "postgresql" && read.attributes["db.operation.name"] == "SELECT")
            #expect(child(of: push) { $0.name == "push: fold" } != nil, "\(trace)")
            #expect(child(of: push) { $0.name == "push: append and write the fold" && $0.attributes["db.operation.name"] == "INSERT" } != nil, "\(trace)")
            // The poke in this server, and the NOTIFY to the others.
            let poke = try #require(child(of: push) { $0.name == "poke" }, "\(trace)")
            #expect(poke.attributes["shortcut_sync.poke.source"] == "this server")
            let announce = try #require(child(of: push) { $0.name == "announce" }, "\(trace)")
            #expect(child(of: announce) { $0.attributes["db.operation.name"] == "NOTIFY" } != nil, "\(trace)")
            // The Mac's stream message, and the pull it made, which the client library sent in the trace.
            let message = try #require(child(of: poke) { $0.name == "stream: changed" }, "\(trace)")
            let pull = try #require(child(of: message) { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }, "\(trace)")
            #expect(child(of: pull) { $0.name == "pull: read the view's changes" } != nil, "\(trace)")
            // The iPad's wake, and APNs' answer.
            let wake = try #require(child(of: push) { $0.name == "wake" }, "\(trace)")
            #expect(wake.attributes["apns.answer"] == "delivered")
        } }
    }

    /// Two servers: the phone pushes to one, the Mac's stream is on the other, which hears of the
    /// change through the coalesced `NOTIFY`. Its poke, its stream message and the Mac's pull
    /// are still in the phone's trace, under the push the first server took.
    @Test func aPokeFromAnotherServersNotifyJoinsThePushsTrace() async throws {
        try await OTLPReceiver.with { receiver in
            let database = try await TestDatabase.shared.freshDatabase()
            func serve(_ name: String) async throws -> ServeProcess {
                try await ServeProcess(databaseURL: database.urlString, arguments: ["--otel-endpoint", receiver.baseURL],
                                       environment: ["OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": name, "OTEL_EXPORTER_OTLP_ENDPOINT": nil])
            }
            let first = try await serve("first")
            defer { first.command.forceStop() }
            let second = try await serve("second")
            defer { second.command.forceStop() }
            try await ShutdownTests.waitUntilReady(first)
            try await ShutdownTests.waitUntilReady(second)

            let (phone, mac, _) = try await Self.phoneAndMac(first)
            let (phoneTrace, phoneSpan) = (Self.randomHex(bytes: 16), Self.randomHex(bytes: 8))
            try await Self.withMac(on: second, token: mac, receiver: receiver) {
                try await Self.push(to: first, token: phone, trace: phoneTrace, span: phoneSpan)
            } then: {}

            // Each server sends its spans every 100 ms, in its own time: wait for both servers' parts.
            let trace = try await Self.spans(of: phoneTrace, in: receiver) { spans in
                spans.contains { $0.service == "second" && $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }
                    && spans.contains { $0.service == "first" && $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/push" }
                    && spans.contains { $0.service == "first" && $0.name == "announce" }
            }
            func child(of parent: ReceivedSpan, _ matches: (ReceivedSpan) -> Bool) -> ReceivedSpan? {
                trace.first { $0.parentSpanID == parent.spanID && matches($0) }
            }
            let push = try #require(trace.first { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/push" }, "\(trace)")
            #expect(push.service == "first" && push.parentSpanID == phoneSpan)
            let notify = try #require(child(of: push) { $0.name == "announce" && $0.service == "first" }, "\(trace)")
            #expect(child(of: notify) { $0.attributes["db.operation.name"] == "NOTIFY" } != nil, "\(trace)")
            let poke = try #require(child(of: push) { $0.name == "poke" && $0.service == "second" }, "\(trace)")
            #expect(poke.attributes["shortcut_sync.poke.source"] == "notify")
            let message = try #require(child(of: poke) { $0.name == "stream: changed" && $0.service == "second" }, "\(trace)")
            #expect(child(of: message) { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" && $0.service == "second" } != nil, "\(trace)")
        }
    }

    /// An account on `serve` with a phone and a Mac: their device tokens, and the account's.
    static func phoneAndMac(_ serve: ServeProcess) async throws -> (phone: String, mac: String, account: String) {
        let account = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken)
        let accountToken = try #require(account.json["accountToken"] as? String)
        return (try await device("iPhone", "iOS", of: accountToken, on: serve), try await device("Mac", "macOS", of: accountToken, on: serve), accountToken)
    }

    static func device(_ name: String, _ platform: String, of accountToken: String, on serve: ServeProcess) async throws -> String {
        let made = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/devices", token: accountToken,
                                                   json: #"{"name":"\#(name)","platform":"\#(platform)"}"#)
        return try #require(made.json["deviceToken"] as? String)
    }

    /// The phone's first donation, pushed with the `traceparent` of its app's span `span` of `trace`.
    static func push(to serve: ServeProcess, token: String, trace: String, span: String) async throws {
        let pushed = try await sendRequest(.POST, serve.baseURL + "/v1/sync/push", token: token, body: PushesThroughAnOutage.donation(1),
                                           headers: [("traceparent", "00-\(trace)-\(span)-01")])
        #expect(pushed.status == 200, "\(pushed.json)")
    }

    /// Runs the Mac on the client library against `serve` (its stream, and a pull at each poke);
    /// once its stream is open (its first pull traced), runs `act`, waits until the Mac's view
    /// has the phone's donation, runs `then`, and stops the Mac.
    static func withMac(on serve: ServeProcess, token: String, receiver: OTLPReceiver,
                        _ act: () async throws -> Void, then: () async throws -> Void) async throws {
        let storage = ClientLibraryTests.storage()
        defer { try? FileManager.default.removeItem(atPath: storage) }
        var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
        configuration.initialBackoff = .milliseconds(20)
        let mac = try ShortcutSyncClient(
            configuration: configuration,
            transport: OpenAPISyncTransport(serverURL: serve.url, deviceToken: token, transport: AsyncHTTPClientTransport()),
            logger: TestDatabase.shared.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await mac.run() }
            // The client opens its stream, then pulls once: once that pull is traced, the stream is open.
            try await eventually("the Mac's first pull is traced", timeout: .seconds(30)) {
                receiver.spans.contains { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }
            }
            try await act()
            try await eventually("the Mac's view has the phone's donation", timeout: .seconds(30)) {
                await mac.shortcuts().contains { $0.identifier == "item-1" }
            }
            try await then()
            group.cancelAll()
        }
    }

    /// `--otel-endpoint` that is no URL spans can be sent to is refused before anything starts.
    @Test func anEndpointThatIsNoURLIsRefused() async throws {
        for endpoint in ["collector:4318", "ftp://127.0.0.1:4318", "http://", "http://127.0.0.1:4318?x=1"] {
            let run = try await CommandProcess.run(["serve", "--otel-endpoint", endpoint, "--port", "0"])
            #expect(run.exitStatus != 0, "\(endpoint)")
            #expect(run.errorOutput.contains("--otel-endpoint must be an http or https URL"), "\(endpoint): \(run.errorOutput)")
        }
    }

    static func randomHex(bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// The spans of `trace` the receiver has, once `complete` says they are all there.
    static func spans(of trace: String, in receiver: OTLPReceiver, until complete: ([ReceivedSpan]) -> Bool) async throws -> [ReceivedSpan] {
        var spans: [ReceivedSpan] = []
        try await eventually("the trace's spans reach the receiver: \(spans)", timeout: .seconds(30)) {
            spans = receiver.spans.filter { $0.traceID == trace }
            return complete(spans)
        }
        return spans
    }
}
