import Hummingbird
import Synchronization

/// The router's routes, as `UnmatchedRouteMiddleware` matches paths against them: filled once,
/// after every route is registered and before the server takes a request.
final class RouteTable: Sendable {
    /// The route paths, split into segments (nil for a capture), with the methods each answers.
    private let routes = Mutex<[(segments: [Substring?], methods: [String])]>([])

    func set(_ routes: [(path: String, method: String)]) {
        let grouped = Dictionary(grouping: routes, by: \.path)
        self.routes.withLock {
            $0 = grouped.map { path, routes in
                (Self.segments(path).map { $0.hasPrefix("{") || $0.hasPrefix(":") ? nil : $0 }, routes.map(\.method).sorted())
            }
        }
    }

    /// The methods the routes matching `path` answer; empty when none matches.
    func methods(forPath path: String) -> [String] {
        let requested = Self.segments(path)
        return routes.withLock { routes in routes.filter { Self.route($0.segments, matches: requested) }.flatMap(\.methods) }.sorted()
    }

    /// Whether some route matches `path`: what every request asks first, so it builds no list.
    func hasRoute(forPath path: String) -> Bool {
        let requested = Self.segments(path)
        return routes.withLock { routes in routes.contains { Self.route($0.segments, matches: requested) } }
    }

    private static func route(_ segments: [Substring?], matches requested: [Substring]) -> Bool {
        segments.count == requested.count
            && zip(segments, requested).allSatisfy { expected, actual in expected.map { $0 == actual } ?? !actual.isEmpty }
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
