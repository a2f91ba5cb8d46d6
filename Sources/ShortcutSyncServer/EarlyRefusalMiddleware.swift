import Hummingbird
import NIOCore

/// A request refused before its body was read (no such route: 404 or 405; no valid token: 401;
/// a declared length over the limit: 413) gets its answer and then its connection closed, as
/// the body deadline's 408 does: the body it still has to send is never read nor discarded, so a
/// client that declares a huge length and trickles it holds no connection slot.
struct EarlyRefusalMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    /// The answers given before a body is read.
    static let refusals: Set<Int> = [401, 404, 405, 413]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let declaresBody = (request.headers[.contentLength].flatMap(Int.init) ?? 0) > 0 || request.headers[.transferEncoding] != nil
        guard declaresBody else { return try await next(request, context) }
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError where Self.refusals.contains(error.status.code) {
            return Self.closing(context.channel, after: try error.response(from: request, context: context))
        }
        return Self.refusals.contains(response.status.code) ? Self.closing(context.channel, after: response) : response
    }

    /// `response`, written whole, as the last answer on its connection: what remains of the
    /// request's body is never read (also the body deadline's 408, `BodyLimitMiddleware`).
    static func closing(_ channel: any Channel, after response: Response) -> Response {
        var closing = response
        closing.headers[.connection] = "close"
        let body = response.body
        closing.body = ResponseBody(contentLength: body.contentLength) { writer in
            try await body.write(writer)
            channel.close(promise: nil)
        }
        return closing
    }
}
