import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import OpenAPIRuntime
import Prometheus
@testable import ShortcutSyncServer
import Synchronization
import Testing

/// `RequestMetricsMiddleware` and `WholeAnswerMiddleware`, called as the router calls them, on
/// a registry of their own (the process's is shared by every test server).
@Suite struct AnswerMiddlewareTests {
    static func context(route: String?) -> BasicRequestContext {
        let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: Logger(label: "test")))
        context.coreContext.endpointPath.value = route
        return context
    }

    static func request(_ method: HTTPRequest.Method = .post, path: String = "/v1/things") -> Request {
        Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path), body: RequestBody(buffer: ByteBuffer()))
    }

    /// The value of the one sample line of `family` that carries every label of `labels`.
    static func sample(_ registry: PrometheusCollectorRegistry, _ family: String, _ labels: [String] = []) -> Double? {
        let lines = registry.emitToString().split(separator: "\n").filter { line in
            line.hasPrefix(family + "{") || line.hasPrefix(family + " ")
        }
        let matching = lines.filter { line in labels.allSatisfy { line.contains($0) } }
        guard matching.count == 1, let value = matching[0].split(separator: " ").last else { return nil }
        return Double(value)
    }

    /// What a body writes, gathered.
    final class Written: @unchecked Sendable {
        // Written by one task, one call after another, then read.
        var parts: [String] = []
        var finished = false
        var trailers: HTTPFields?
    }

    struct RecordingWriter: ResponseBodyWriter {
        let written: Written
        mutating func write(_ buffer: ByteBuffer) async throws { written.parts.append(String(buffer: buffer)) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
            written.finished = true
            written.trailers = trailingHeaders
        }
    }

    static let ok = [#"http_route="/v1/things""#, #"http_request_method="POST""#, #"http_response_status_code="200""#]

    @Test func anAnswerOfKnownLengthIsCountedWhenHandedBackAndKeepsItsBody() async throws {
        let registry = PrometheusCollectorRegistry()
        let middleware = RequestMetricsMiddleware<BasicRequestContext>(factory: PrometheusMetricsFactory(registry: registry))
        let response = try await middleware.handle(Self.request(), context: Self.context(route: "/v1/things")) { _, _ in
            Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"version\":3}")))
        }
        // Counted before a byte of the body is written: the body is handed on as it came.
        #expect(Self.sample(registry, "hb_requests", Self.ok) == 1)
        #expect(Self.sample(registry, "http_server_request_duration_count", Self.ok) == 1)
        #expect(Self.sample(registry, "http_server_active_requests", [#"http_request_method="POST""#]) == 0)
        #expect(response.body.contentLength == 13)
        #expect(response.headers[.contentLength] == "13")
        let written = Written()
        try await response.body.write(RecordingWriter(written: written))
        #expect(written.parts == ["{\"version\":3}"])
        #expect(written.finished)
        #expect(Self.sample(registry, "hb_requests", Self.ok) == 1)
    }

    @Test func aStreamIsActiveUntilItsBodyEndsAndCountedThen() async throws {
        let registry = PrometheusCollectorRegistry()
        let middleware = RequestMetricsMiddleware<BasicRequestContext>(factory: PrometheusMetricsFactory(registry: registry))
        let response = try await middleware.handle(Self.request(.get, path: "/v1/sync/stream"), context: Self.context(route: "/v1/sync/stream")) { _, _ in
            Response(status: .ok, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                try await writer.finish(nil)
            })
        }
        let streamed = [#"http_route="/v1/sync/stream""#, #"http_request_method="GET""#, #"http_response_status_code="200""#]
        #expect(Self.sample(registry, "http_server_active_requests", [#"http_request_method="GET""#]) == 1)
        #expect(Self.sample(registry, "hb_requests", streamed) == nil)
        #expect(response.body.contentLength == nil)
        let written = Written()
        try await response.body.write(RecordingWriter(written: written))
        #expect(written.parts == [": keep-alive\n\n"])
        #expect(Self.sample(registry, "http_server_active_requests", [#"http_request_method="GET""#]) == 0)
        #expect(Self.sample(registry, "hb_requests", streamed) == 1)
        #expect(Self.sample(registry, "http_server_request_duration_count", streamed) == 1)
    }

    @Test func aHandlerThatThrowsIsCountedWithItsStatusAndAsAnError() async throws {
        let registry = PrometheusCollectorRegistry()
        let middleware = RequestMetricsMiddleware<BasicRequestContext>(factory: PrometheusMetricsFactory(registry: registry))
        await #expect(throws: HTTPError.self) {
            try await middleware.handle(Self.request(), context: Self.context(route: "/v1/things")) { _, _ in
                throw HTTPError(.conflict)
            }
        }
        let conflict = [#"http_route="/v1/things""#, #"http_response_status_code="409""#]
        #expect(Self.sample(registry, "hb_requests", conflict) == 1)
        #expect(Self.sample(registry, "hb_request_errors", [#"http_route="/v1/things""#, #"error_type="409""#]) == 1)
        #expect(Self.sample(registry, "http_server_active_requests", [#"http_request_method="POST""#]) == 0)
        // A route the router did not find is counted as Hummingbird counts it.
        await #expect(throws: HTTPError.self) {
            try await middleware.handle(Self.request(), context: Self.context(route: nil)) { _, _ in throw HTTPError(.notFound) }
        }
        #expect(Self.sample(registry, "hb_requests", [#"http_route="NotFound""#, #"http_response_status_code="404""#]) == 1)
    }

    @Test func aBodyOfKnownLengthWrittenInPartsIsHandedOnWhole() async throws {
        let middleware = WholeAnswerMiddleware<BasicRequestContext>()
        let asked = Mutex(0)
        let response = try await middleware.handle(Self.request(), context: Self.context(route: "/v1/things")) { _, _ in
            Response(status: .ok, body: ResponseBody(contentLength: 11) { writer in
                asked.withLock { $0 += 1 }
                try await writer.write(ByteBuffer(string: "{\"a\":"))
                try await writer.write(ByteBuffer(string: "[1,2]}"))
                try await writer.finish(nil)
            })
        }
        // Gathered once, in the middleware: the body Hummingbird gets is one buffer.
        #expect(asked.withLock { $0 } == 1)
        #expect(response.body.contentLength == 11)
        let written = Written()
        try await response.body.write(RecordingWriter(written: written))
        #expect(written.parts == ["{\"a\":[1,2]}"])
        #expect(written.finished)
        #expect(asked.withLock { $0 } == 1)
    }

    @Test func aStreamAndALargeAnswerAreLeftAsTheyAre() async throws {
        let middleware = WholeAnswerMiddleware<BasicRequestContext>(limit: 8)
        for length in [nil, 9] as [Int?] {
            let asked = Mutex(0)
            let response = try await middleware.handle(Self.request(), context: Self.context(route: "/v1/things")) { _, _ in
                Response(status: .ok, body: ResponseBody(contentLength: length) { writer in
                    asked.withLock { $0 += 1 }
                    try await writer.write(ByteBuffer(string: "123456789"))
                    try await writer.finish(nil)
                })
            }
            // Not written until Hummingbird writes it.
            #expect(asked.withLock { $0 } == 0, "length \(String(describing: length))")
            let written = Written()
            try await response.body.write(RecordingWriter(written: written))
            #expect(asked.withLock { $0 } == 1)
            #expect(written.parts == ["123456789"])
        }
    }

    @Test func trailersAreKeptWithTheParts() async throws {
        let middleware = WholeAnswerMiddleware<BasicRequestContext>()
        let response = try await middleware.handle(Self.request(), context: Self.context(route: "/v1/things")) { _, _ in
            Response(status: .ok, body: ResponseBody(contentLength: 4) { writer in
                try await writer.write(ByteBuffer(string: "ab"))
                try await writer.write(ByteBuffer(string: "cd"))
                try await writer.finish([.serverTiming: "total;dur=1"])
            })
        }
        let written = Written()
        try await response.body.write(RecordingWriter(written: written))
        #expect(written.parts == ["ab", "cd"])
        #expect(written.trailers?[.serverTiming] == "total;dur=1")
    }

    /// The generated server's operations are registered behind the gathering: their answer's
    /// bytes are read once the router has answered, before Hummingbird writes a byte.
    @Test func theGeneratedOperationsAnswersAreGatheredBeforeTheyAreWritten() async throws {
        let router = Router(context: BasicRequestContext.self)
        let read = Mutex(false), parts = Mutex([ArraySlice("hello".utf8)])
        let bytes = AsyncStream<ArraySlice<UInt8>>(unfolding: {
            read.withLock { $0 = true }
            return parts.withLock { $0.popLast() }
        })
        try GeneratedRoutes(router: router) { _, _ in true }.register({ _, _, _ in
            (HTTPResponse(status: .ok), HTTPBody(bytes, length: .known(5), iterationBehavior: .single))
        }, method: .get, path: "/v1/things")
        let response = try await router.buildResponder().respond(to: Self.request(.get), context: Self.context(route: nil))
        #expect(read.withLock { $0 }, "the body was read before the answer was handed to Hummingbird")
        let written = Written()
        try await response.body.write(RecordingWriter(written: written))
        #expect(written.parts == ["hello"])
    }
}
