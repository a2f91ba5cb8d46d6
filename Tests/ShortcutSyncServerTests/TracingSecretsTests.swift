import AsyncHTTPClient
import Foundation
import NIOHTTP1
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// A traced service never writes a secret to its log or its spans, whatever a client sends
/// (issue 56): a malformed `traceparent` or `tracestate` once made the tracer log the whole
/// carrier it read them from, every header of the request, its bearer token with them.
@Suite struct TracingSecretsTests {
    /// `traceparent` values the W3C propagator refuses, and `tracestate` values it refuses beside
    /// a well-formed `traceparent`.
    static let malformed: [[(String, String)]] = [
        [("traceparent", "00-not-a-trace-01")],
        [("traceparent", "ff-" + String(repeating: "0", count: 32) + "-" + String(repeating: "0", count: 16) + "-01")],
        [("traceparent", "00-\(TracingTests.randomHex(bytes: 16))-\(TracingTests.randomHex(bytes: 8))-01"), ("tracestate", "=,=,not a list")],
        [("traceparent", "00-\(TracingTests.randomHex(bytes: 16))-\(TracingTests.randomHex(bytes: 8))-01"), ("tracestate", "UPPER=1,a=b=c")],
    ]

    @Test func malformedTraceHeadersPutNoBearerTokenInTheLogNorInASpan() async throws {
        try await OTLPReceiver.with { receiver in
            let database = try await TestDatabase.shared.freshDatabase()
            let serve = try await ServeProcess(databaseURL: database.urlString, arguments: ["--otel-endpoint", receiver.baseURL],
                                               environment: ["OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": nil, "OTEL_EXPORTER_OTLP_ENDPOINT": nil])
            defer { serve.command.forceStop() }
            try await ShutdownTests.waitUntilReady(serve)
            let (phone, _, account) = try await TracingTests.phoneAndMac(serve)
            let secrets = [("device", phone), ("account", account), ("admin", serve.adminToken)]

            // Each token on a request of its own with each malformed pair, and a cookie beside it.
            for headers in Self.malformed {
                let sent = headers + [("Cookie", "session=\(phone)"), ("X-Api-Key", account)]
                #expect(try await sendRequest(.GET, serve.baseURL + "/v1/sync/pull", token: phone, headers: sent).status == 200)
                #expect(try await sendRequest(.GET, serve.baseURL + "/v1/devices", token: account, headers: sent).status == 200)
                #expect(try await sendRequest(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken, headers: sent).status == 201)
            }
            // A well-formed trace last: once its span is exported, the ones before it were too.
            let trace = TracingTests.randomHex(bytes: 16)
            let last = [("traceparent", "00-\(trace)-\(TracingTests.randomHex(bytes: 8))-01")]
            #expect(try await sendRequest(.GET, serve.baseURL + "/v1/sync/pull", token: phone, headers: last).status == 200)
            _ = try await TracingTests.spans(of: trace, in: receiver) { !$0.isEmpty }
            try await eventually("the malformed requests' spans are exported", timeout: .seconds(30)) {
                receiver.spans.filter { $0.kind == 2 }.count >= 3 * Self.malformed.count + 1
            }

            let log = serve.output
            for (kind, token) in secrets {
                #expect(!log.contains(token), "the \(kind) token is in the log")
                for span in receiver.spans {
                    #expect(!span.attributes.values.contains { $0.contains(token) }, "the \(kind) token is in span \(span): \(span.attributes)")
                    #expect(!span.name.contains(token), "the \(kind) token names span \(span)")
                }
            }
        }
    }
}
