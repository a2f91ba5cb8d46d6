import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// A router as the generated server's transport, for some of the operations of `openapi.yaml`
/// only: the generated code registers every operation, and `includes` says which ones this
/// router serves. The service's public router leaves out those it answers with a route of its
/// own (`PushRoute`) and the operators' (`operatorOperations`), which the operators' listener serves.
///
/// The operations are registered behind `WholeAnswerMiddleware`: the transport hands each answer
/// to Hummingbird as a body that writes its bytes when asked, which Hummingbird writes in parts;
/// gathered, an answer of known length goes to the socket in one write.
struct GeneratedRoutes<Context: RequestContext>: ServerTransport {
    let routes: RouterGroup<Context>
    let includes: @Sendable (_ method: HTTPRequest.Method, _ path: String) -> Bool

    init(router: Router<Context>, includes: @escaping @Sendable (_ method: HTTPRequest.Method, _ path: String) -> Bool) {
        routes = router.group().add(middleware: WholeAnswerMiddleware())
        self.includes = includes
    }

    /// `GET /metrics` and `GET /readyz`: served on the operators' listener only.
    static var operatorOperations: [(method: HTTPRequest.Method, path: String)] { [(.get, "/metrics"), (.get, "/readyz")] }

    static func isOperators(_ method: HTTPRequest.Method, _ path: String) -> Bool {
        operatorOperations.contains { $0.method == method && $0.path == path }
    }

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        guard includes(method, path) else { return }
        routes.register(handler, method: method, path: path)
    }
}
