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

            let account = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken)
            let accountToken = try #require(account.json["accountToken"] as? String)
            func device(_ name: String, _ platform: String) async throws -> String {
                let made = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/devices", token: accountToken,
                                                           json: #"{"name":"\#(name)","platform":"\#(platform)"}"#)
                return try #require(made.json["deviceToken"] as? String)
            }
            let phone = try await device("iPhone", "iOS")
            let mac = try await device("Mac", "macOS")
            let pad = try await device("iPad", "iPadOS")
            let apnsToken = String(repeating: "ab", count: 32)
            #expect(try await ShutdownTests.request(.PUT, serve.baseURL + "/v1/device/push-token", token: pad,
                                                    json: #"{"service":"apns","token":"\#(apnsToken)","topic":"com.example.soup","environment":"production"}"#).status == 204)

            // The phone's push is in a trace of its own app's (as a device that traces sends it).
            let phoneTrace = Self.randomHex(bytes: 16)
            let phoneSpan = Self.randomHex(bytes: 8)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }
            var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
            configuration.initialBackoff = .milliseconds(20)
            let macClient = try ShortcutSyncClient(
                configuration: configuration,
                transport: OpenAPISyncTransport(serverURL: serve.url, deviceToken: mac, transport: AsyncHTTPClientTransport()),
                logger: TestDatabase.shared.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await macClient.run() }
                // The client opens its stream, then pulls once: once that pull is traced, the stream is open.
                try await eventually("the Mac's first pull is traced", timeout: .seconds(30)) {
                    receiver.spans.contains { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }
                }

                let pushed = try await sendRequest(.POST, serve.baseURL + "/v1/sync/push", token: phone, body: PushesThroughAnOutage.donation(1),
                                                   headers: [("traceparent", "00-\(phoneTrace)-\(phoneSpan)-01")])
                #expect(pushed.status == 200, "\(pushed.json)")
                try await eventually("the Mac's view has the phone's donation", timeout: .seconds(30)) {
                    await macClient.shortcuts().contains { $0.identifier == "item-1" }
                }
                let woken = try await standIn.waitForRequests(1, within: .seconds(60))
                #expect(woken.first?.status == 200)
                group.cancelAll()
            }

            // Everything of the trace, once the service has sent it (every 100 ms).
            let trace = try await Self.spans(of: phoneTrace, in: receiver) { spans in
                spans.contains { $0.name == "wake" } && spans.contains { $0.kind == 2 && $0.attributes["url.path"] == "/v1/sync/pull" }
                    && spans.contains { $0.name == "announce" }
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
