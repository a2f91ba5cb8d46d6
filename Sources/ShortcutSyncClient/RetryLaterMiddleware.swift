import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// Turns 503 and 429 into `SyncTransportError.retryLater` with the answer's `Retry-After`, which
/// `openapi.yaml` does not declare (any operation may answer it).
struct RetryLaterMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code == 503 || response.status.code == 429 else { return (response, responseBody) }
        throw SyncTransportError.retryLater(retryAfter: response.headerFields[.retryAfter].flatMap { Int($0) })
    }
}
