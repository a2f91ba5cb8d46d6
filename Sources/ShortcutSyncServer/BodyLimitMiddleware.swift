import Hummingbird
import NIOCore
import ShortcutSyncDomain

/// Reads a request's body whole before any handler sees it, within bounds (DESIGN §5): over its
/// limit (1 MiB for a push, DESIGN §2; 64 KiB for anything else) it is `413`, and a body that
/// has not arrived within the deadline (10 s from its head, `BodyDeadlineHandler`) is `408` and
/// its connection is closed, so a client that stalls or trickles an upload holds neither memory
/// nor a connection for long.
///
/// It runs after `AuthenticationMiddleware`: nothing of a body is read for a caller whose token
/// does not hold.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    var pushLimit = Limits.maxPushBytes
    var otherLimit = 64 * 1024
    /// What the 408 says; `BodyDeadlineHandler` keeps it.
    var deadline: Duration = .seconds(10)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = Caller.routePath(request.uri.path) == PushRoute.path ? pushLimit : otherLimit
        let tooLarge = APIProblem.tooLarge("the body is larger than \(limit) bytes")
        let length = request.headers[.contentLength].flatMap(Int.init)
        if let length, length > limit {
            throw tooLarge
        }
        // HTTP/1.1: a request with neither a length nor a transfer coding has no body (a pull, a
        // stream): nothing to wait for.
        if length == 0 || (length == nil && request.headers[.transferEncoding] == nil) {
            return try await next(request, context)
        }
        var collected = request
        do {
            _ = try await collected.collectBody(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch is BodyDeadlinePassed {
            return EarlyRefusalMiddleware.closing(context.channel, after: APIProblem(
                status: 408, title: "Request Timeout",
                detail: "the body did not arrive within \(deadline.components.seconds) s; the connection is closed").response)
        }
        return try await next(collected, context)
    }
}
