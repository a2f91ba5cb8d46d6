import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// Sends a bearer token (a device's, an account's, the admin's) with every request; none when nil.
public struct BearerToken: ClientMiddleware {
    public let token: String?

    public init(token: String?) {
        self.token = token
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        return try await next(request, body, baseURL)
    }
}
