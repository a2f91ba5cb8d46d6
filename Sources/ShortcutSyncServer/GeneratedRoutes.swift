import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// The router as the generated server's transport, less the operations the service answers with
/// routes of its own (`PushRoute`): the generated code registers every operation of
/// `openapi.yaml`, and each of those it is given here is not registered.
struct GeneratedRoutes: ServerTransport {
    let router: Router<SyncRequestContext>
    let except: [(method: HTTPRequest.Method, path: String)]

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        guard !except.contains(where: { $0.method == method && $0.path == path }) else { return }
        router.register(handler, method: method, path: path)
    }
}
