import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// A router as the generated server's transport, for some of the operations of `openapi.yaml`
/// only: the generated code registers every operation, and `includes` says which ones this
/// router serves. The service's public router leaves out those it answers with a route of its
/// own (`PushRoute`) and the operators' (`operatorOperations`), which the operators' listener serves.
struct GeneratedRoutes<Context: RequestContext>: ServerTransport {
    let router: Router<Context>
    let includes: @Sendable (_ method: HTTPRequest.Method, _ path: String) -> Bool

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
        router.register(handler, method: method, path: path)
    }
}
