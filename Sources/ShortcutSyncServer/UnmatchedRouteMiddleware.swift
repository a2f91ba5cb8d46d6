import Hummingbird
import Synchronization

/// Answers the requests no route takes, as problem+json: `404` when the path exists for no
/// method — at once, before any middleware reads a token or a byte of the body — and `405` with
/// `Allow` when the path exists with other methods.
///
/// Hummingbird's router answers both with a bare 404. This middleware sits first on the router;
/// the routes it knows (exact segments and `{parameter}` captures) are handed to it once they
/// are all registered (`RouteTable`).
struct UnmatchedRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    let table: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard table.hasRoute(forPath: path) else {
            throw APIProblem.notFound("there is no resource at \(path)")
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = table.methods(forPath: path)
            let problem = allowed.isEmpty
                ? APIProblem.notFound("there is no resource at \(path)")
                : APIProblem.methodNotAllowed(request.method.rawValue, path: path, allowed: allowed)
            throw problem
        }
    }
}
