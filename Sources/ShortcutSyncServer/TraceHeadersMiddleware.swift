import HTTPTypes
import Hummingbird
import Tracing

/// Hummingbird's `TracingMiddleware`, shown only the headers W3C's trace context is made of.
///
/// The middleware hands the instrument the request's whole header list as its carrier, and
/// OpenTelemetry's tracer logs that carrier whole when it cannot read a `traceparent` or a
/// `tracestate` from it: any client could make the service write its own bearer token, or
/// another's cookie, to the log by sending a malformed one (issue 56). So the middleware sees a
/// copy of the request that holds `traceparent` and `tracestate` and nothing else, and the
/// routes after it get the request as it came. A span loses nothing it recorded: no header is
/// recorded but the user agent and the body's length, which are set here from the request.
struct TraceHeadersMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    /// The headers of W3C Trace Context, the only ones an instrument reads.
    static let traceHeaders: [HTTPField.Name] = [HTTPField.Name("traceparent")!, HTTPField.Name("tracestate")!]

    let tracing: TracingMiddleware<Context>

    /// `redactingQueryParameters`: as `TracingMiddleware`'s, the query parameters whose values no span records.
    init(redactingQueryParameters: Set<String>) {
        tracing = TracingMiddleware(redactingQueryParameters: redactingQueryParameters)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var head = request.head
        head.headerFields = Self.traceContext(of: request.headers)
        return try await tracing.handle(Request(head: head, body: request.body), context: context) { _, context in
            if let span = InstrumentationSystem.tracer.activeSpan(identifiedBy: .current ?? .topLevel) {
                span.attributes["user_agent.original"] = request.headers[.userAgent]
                span.attributes["http.request.body.size"] = request.headers[.contentLength].flatMap { Int($0) }
            }
            return try await next(request, context)
        }
    }

    /// Only the trace context's headers of `headers`, each of its values.
    static func traceContext(of headers: HTTPFields) -> HTTPFields {
        HTTPFields(headers.filter { traceHeaders.contains($0.name) })
    }
}
