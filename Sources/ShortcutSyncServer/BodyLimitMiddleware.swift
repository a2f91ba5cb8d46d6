import Hummingbird
import NIOCore
import ShortcutSyncDomain

/// Reads a request's body whole before any handler sees it, within bounds (DESIGN §5): over its
/// limit (1 MiB for a push, DESIGN §2; 64 KiB for anything else) it is `413`, and a body that
/// has not arrived within the deadline (10 s) is `408` and its connection is closed, so a client
/// that stalls or trickles an upload holds neither memory nor a connection for long.
///
/// It runs after `AuthenticationMiddleware`: nothing of a body is read for a caller whose token
/// does not hold.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    var pushLimit = Limits.maxPushBytes
    var otherLimit = 64 * 1024
    var deadline: Duration = .seconds(10)

    /// How the collection of a body ended.
    private enum Outcome: Sendable {
        case complete(Request)
        case tooLarge
        case late
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = Caller.routePath(request.uri.path) == PushRoute.path ? pushLimit : otherLimit
        let tooLarge = APIProblem.tooLarge("the body is larger than \(limit) bytes")
        let length = request.headers[.contentLength].flatMap(Int.init)
        if let length, length > limit {
            throw tooLarge
        }
        // HTTP/1.1: a request with neither a length nor a transfer coding has no body (a pull, a
        // stream): nothing to wait for, and no task spent on it.
        if length == 0 || (length == nil && request.headers[.transferEncoding] == nil) {
            return try await next(request, context)
        }
        switch try await collect(request, upTo: limit) {
        case .complete(let collected):
            return try await next(collected, context)
        case .tooLarge:
            throw tooLarge
        case .late:
            return EarlyRefusalMiddleware.closing(context.channel, after: APIProblem(
                status: 408, title: "Request Timeout",
                detail: "the body did not arrive within \(deadline.components.seconds) s; the connection is closed").response)
        }
    }

    /// The request with its body in memory, unless it is too large or late.
    private func collect(_ request: Request, upTo limit: Int) async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask {
                var request = request
                do {
                    _ = try await request.collectBody(upTo: limit)
                } catch let error as HTTPError where error.status == .contentTooLarge {
                    return .tooLarge
                }
                return .complete(request)
            }
            group.addTask { [deadline] in
                try await Task.sleep(for: deadline)
                return .late
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
