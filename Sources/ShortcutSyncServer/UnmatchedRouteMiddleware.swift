import Hummingbird

/// Answers the requests no route takes, as problem+json: `405` with `Allow` when the path exists
/// with other methods, `404` when it does not exist at all.
///
/// Hummingbird's router answers both with a bare 404; this middleware sits first on the router
/// and knows its routes (exact segments and `{parameter}` captures).
struct UnmatchedRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The route paths, split into segments (nil for a capture), with the methods each answers.
    private let routes: [(segments: [Substring?], methods: [String])]

    init(routes: [(path: String, method: String)]) {
        let grouped = Dictionary(grouping: routes, by: \.path)
        self.routes = grouped.map { path, routes in
            (Self.segments(path).map { $0.hasPrefix("{") || $0.hasPrefix(":") ? nil : $0 }, routes.map(\.method).sorted())
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            let allowed = methods(forPath: path)
            let problem = allowed.isEmpty
                ? APIProblem.notFound("there is no resource at \(path)")
                : APIProblem.methodNotAllowed(request.method.rawValue, path: path, allowed: allowed)
            throw problem
        }
    }

    /// The methods the routes matching `path` answer; empty when none matches.
    func methods(forPath path: String) -> [String] {
        let requested = Self.segments(path)
        return routes.filter { route in
            route.segments.count == requested.count
                && zip(route.segments, requested).allSatisfy { expected, actual in expected.map { $0 == actual } ?? !actual.isEmpty }
        }
        .flatMap(\.methods).sorted()
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
