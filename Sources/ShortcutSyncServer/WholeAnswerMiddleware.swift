import HTTPTypes
import Hummingbird
import NIOCore

/// Hands Hummingbird an answer of known length up to `limit` bytes as one buffer, so that its head,
/// body and end reach the socket in one write. The generated server's answers (a pull, the
/// account's devices, a suggestion…) come as a body that writes its bytes when asked: Hummingbird
/// then writes the head, then each part, each a hop from the request's task to the event loop and
/// a write of its own (docs/benchmarks.md, "The answer in one write"). A stream, whose length is
/// not known, and a larger answer, are left as they are. `GeneratedRoutes` puts it before those
/// operations only: the routes of the service's own answer with one buffer already.
struct WholeAnswerMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The most bytes gathered: past them a second write is nothing beside the bytes copied.
    let limit: Int

    init(limit: Int = 64 << 10) {
        self.limit = limit
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard let length = response.body.contentLength, length <= limit else { return response }
        let gathered = GatheredBody()
        try await response.body.write(GatheringWriter(gathered: gathered))
        // Trailers (which no answer of this service has) are kept by writing the parts as they came.
        guard gathered.trailers == nil else {
            let (parts, trailers) = (gathered.parts, gathered.trailers)
            response.body = ResponseBody(contentLength: length) { writer in
                try await writer.write(contentsOf: parts)
                try await writer.finish(trailers)
            }
            return response
        }
        response.body = ResponseBody(byteBuffer: gathered.whole())
        return response
    }
}

/// What a body wrote, in order.
private final class GatheredBody: @unchecked Sendable {
    // Only the request's task touches it, one call after another.
    var parts: [ByteBuffer] = []
    var trailers: HTTPFields?

    /// The parts as one buffer: the only part as it is, else copied into one.
    func whole() -> ByteBuffer {
        guard parts.count != 1 else { return parts[0] }
        var whole = ByteBuffer()
        whole.reserveCapacity(parts.reduce(0) { $0 + $1.readableBytes })
        for var part in parts { whole.writeBuffer(&part) }
        return whole
    }
}

private struct GatheringWriter: ResponseBodyWriter {
    let gathered: GatheredBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        gathered.parts.append(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        gathered.trailers = trailingHeaders
    }
}
