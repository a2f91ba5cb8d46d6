import CoreMetrics
import Dispatch
import HTTPTypes
import Hummingbird
import Synchronization

/// The HTTP metrics that the dashboard and the alerts read (`hb_requests`,
/// `http_server_request_duration`, `http_server_active_requests`, `hb_request_errors`), with the
/// names and labels of Hummingbird's own `MetricsMiddleware`, counted when the answer is handed
/// back instead of when its body has been written, for every answer whose length is known.
///
/// Hummingbird's middleware wraps every answer's body in a closure to count it after the write.
/// That takes the answer off Hummingbird's one-write path (head, body and end handed to the
/// connection at once): the head and the body then went to the socket in two writes, each a hop
/// from the request's task to the event loop, for every push and pull (docs/benchmarks.md,
/// "The answer in one write"). Only a body of unknown length (a stream) is still counted after
/// it ends, so that an open stream stays an active request and its duration is its life.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let metrics: RequestMetrics

    /// `factory`: where the metrics are made (the process's swift-metrics backend unless a test gives its own).
    init(factory: any MetricsFactory = MetricsSystem.factory) {
        metrics = RequestMetrics(factory: factory)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = metrics.active(request.method)
        active.increment()
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            metrics.failed(route: context.endpointPath ?? "NotFound", method: request.method, status: status)
            active.decrement()
            throw error
        }
        let route = context.endpointPath ?? "Unknown"
        let (method, status, metrics) = (request.method, response.status, metrics)
        guard response.body.contentLength == nil else {
            metrics.answered(route: route, method: method, status: status, startedAt: started)
            active.decrement()
            return response
        }
        var streamed = response
        let body = response.body
        streamed.body = ResponseBody { writer in
            defer {
                metrics.answered(route: route, method: method, status: status, startedAt: started)
                active.decrement()
            }
            try await body.write(writer)
        }
        return streamed
    }
}

/// The metrics of `RequestMetricsMiddleware`, each made once per label set: making one asks the
/// backend, which looks its labels up under a lock. The sets are bounded whatever clients send:
/// a route is one of the router's (or "Unknown", "NotFound"), a method one the HTTP parser knows.
final class RequestMetrics: Sendable {
    private struct Answer: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private struct Answered {
        let requests: Counter
        let duration: Timer
    }

    private let factory: any MetricsFactory
    private let actives = Mutex<[HTTPRequest.Method: Meter]>([:])
    private let answers = Mutex<[Answer: Answered]>([:])
    private let failures = Mutex<[Answer: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
        // The series the dashboard and the alerts read, at 0 before the first request (issue 59):
        // an absent series is no zero to Prometheus, and `rate()` and the alerts would see nothing.
        for (route, method) in [(PushRoute.path, HTTPRequest.Method.post), ("/v1/sync/pull", .get)] {
            for status in [200, 429, 500, 503] { _ = made(Answer(route: route, method: method, status: status)) }
        }
    }

    /// The requests of `method` under way.
    func active(_ method: HTTPRequest.Method) -> Meter {
        actives.withLock { actives in
            if let meter = actives[method] { return meter }
            let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)], factory: factory)
            actives[method] = meter
            return meter
        }
    }

    /// A request answered with `status`, `startedAt` (`DispatchTime`'s uptime nanoseconds) on.
    func answered(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, startedAt: UInt64) {
        let answered = made(Answer(route: route, method: method, status: status.code))
        answered.requests.increment()
        let now = DispatchTime.now().uptimeNanoseconds
        answered.duration.recordNanoseconds(now >= startedAt ? now - startedAt : 0)
    }

    /// A request whose handler threw, answered with `status` by the router.
    func failed(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status) {
        let key = Answer(route: route, method: method, status: status.code)
        let errors = failures.withLock { failures in
            if let counter = failures[key] { return counter }
            let counter = Counter(label: "hb.request.errors",
                                  dimensions: [("http.route", route), ("http.request.method", method.rawValue), ("error.type", String(status.code))],
                                  factory: factory)
            failures[key] = counter
            return counter
        }
        made(key).requests.increment()
        errors.increment()
    }

    private func made(_ key: Answer) -> Answered {
        answers.withLock { answers in
            if let answered = answers[key] { return answered }
            let dimensions = [("http.route", key.route), ("http.request.method", key.method.rawValue), ("http.response.status_code", String(key.status))]
            let answered = Answered(
                requests: Counter(label: "hb.requests", dimensions: dimensions, factory: factory),
                duration: Timer(label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory))
            answers[key] = answered
            return answered
        }
    }
}
