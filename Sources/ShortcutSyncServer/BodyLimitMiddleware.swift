import Hummingbird
import ShortcutSyncDomain

/// Refuses request bodies over the limit with 413 before anything decodes them: 1 MiB for a
/// push (DESIGN §2), 64 KiB for anything else.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    var pushLimit = Limits.maxPushBytes
    var otherLimit = 64 * 1024

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = request.uri.path == "/v1/sync/push" ? pushLimit : otherLimit
        let tooLarge = APIProblem.tooLarge("the body is larger than \(limit) bytes")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return tooLarge.response
        }
        var request = request
        do {
            _ = try await request.collectBody(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return tooLarge.response
        }
        return try await next(request, context)
    }
}

extension APIProblem {
    /// The problem as a Hummingbird response, for middlewares outside the OpenAPI handlers.
    var response: Response {
        Response(status: .init(code: status), headers: headerFields, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }
}
