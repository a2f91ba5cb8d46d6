import HTTPTypes
import Hummingbird

/// Wraps the router: every request that needs the database runs through
/// `DatabaseReach.whileReachable` — refused with `503` and `Retry-After` at once while the
/// database is known to be away, and within moments of its going when it was already waiting on
/// it (the token lookup is its first wait, then the operation's own).
///
/// It wraps the router's responder rather than sitting among its middlewares: a middleware's
/// `next` may not escape, and the request must run in a child task that can be cancelled. A
/// responder is a `Sendable` value, so the child task holds it with no pretence. A stream is
/// bounded only until its response begins: once open, it outlives an outage and is poked again
/// when the database returns. Readiness answers for itself. Each answer says how long the
/// service held its request (`Server-Timing: held;dur=…`, milliseconds on the service's clock).
extension HTTPField.Name {
    /// The standard `Server-Timing` header.
    static let serverTiming = Self("Server-Timing")!
}

struct DatabaseReachResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == SyncRequestContext {
    typealias Context = SyncRequestContext

    let inner: Inner
    let reach: DatabaseReach

    /// `held;dur=<milliseconds>`.
    static func serverTiming(_ held: Duration) -> String {
        let milliseconds = Double(held.components.seconds) * 1_000 + Double(held.components.attoseconds) / 1e15
        return "held;dur=\((milliseconds * 10).rounded() / 10)"
    }

    @Sendable func respond(to request: Request, context: Context) async throws -> Response {
        // The routes that take a token are the ones that read or write the database.
        guard Caller.required(method: request.method.rawValue, path: request.uri.path) != nil else {
            return try await inner.respond(to: request, context: context)
        }
        let arrived = ContinuousClock.now
        var response: Response
        do {
            response = try await reach.whileReachable { [inner] in try await inner.respond(to: request, context: context) }
        } catch is DatabaseAway {
            // Outside the router Hummingbird renders no error: the problem is the response.
            response = APIProblem.unavailable().response
        }
        // How long the service held the request, on its own clock: what the bound of DESIGN §8
        // is about (a client on a loaded machine also counts its own delays).
        response.headers[.serverTiming] = Self.serverTiming(ContinuousClock.now - arrived)
        return response
    }
}
