import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncDomain

/// Reads a push's events into domain values straight from the request's bytes, once, for the
/// push handler (`PushBodyMiddleware.events`).
///
/// The generated server still decodes the body into its own types (that check stays: what it
/// refuses is refused as before), but the handler no longer turns those back into JSON and then
/// into domain events: measured with `perf` during `bench push` (4 devices × 100-event batches),
/// that round trip was 28 % of the service's CPU, and the service's CPU was what limited pushes.
struct PushBodyMiddleware: ServerMiddleware {
    /// The push's events as the domain decodes them from the body, or why they do not decode;
    /// nil outside a push with a body.
    @TaskLocal static var events: Result<[Event], any Error>?

    private struct PushBody: Decodable {
        var events: [Event]
    }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard operationID == "push", let body else { return try await next(request, body, metadata) }
        // BodyLimitMiddleware has already refused bodies over the limit.
        let bytes = try await [UInt8](collecting: body, upTo: Limits.maxPushBytes + 1)
        let decoded = Result { try JSONDecoder().decode(PushBody.self, from: Data(bytes)).events }
        return try await Self.$events.withValue(decoded) {
            try await next(request, HTTPBody(bytes), metadata)
        }
    }
}
