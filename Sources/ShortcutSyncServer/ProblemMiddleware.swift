import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// Turns every error of an operation into an `application/problem+json` answer.
///
/// Handlers throw `APIProblem`; a request the generated code cannot decode becomes 400 (not
/// JSON at all) or 422 (JSON of the wrong shape) with a pointer to the field at fault; anything
/// else is a 500 that is logged and not explained to the caller.
struct ProblemMiddleware: ServerMiddleware {
    let logger: Logger

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await next(request, body, metadata)
        } catch {
            let problem = problem(for: error, operationID: operationID)
            var response = HTTPResponse(status: .init(code: problem.status))
            response.headerFields[.contentType] = "application/problem+json"
            if problem.status == 401 { response.headerFields[.wwwAuthenticate] = "Bearer" }
            return (response, HTTPBody(problem.json))
        }
    }

    func problem(for error: any Error, operationID: String) -> APIProblem {
        let cause = (error as? ServerError)?.underlyingError ?? error
        switch cause {
        case let problem as APIProblem:
            return problem
        case let decoding as DecodingError:
            return decoding.isSyntaxError
                ? .malformed("the body is not valid JSON")
                : .invalid([decoding.fieldError])
        default:
            logger.error("request failed", metadata: ["operation": "\(operationID)", "error": "\(String(reflecting: cause))"])
            return APIProblem(status: 500, title: "Internal Server Error", detail: "the request failed; it has been logged")
        }
    }
}

/// Hands the request's bearer token to the handlers, which decide whose token it must be.
struct BearerTokenMiddleware: ServerMiddleware {
    @TaskLocal static var token: String?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let header = request.headerFields[.authorization] ?? ""
        let token = header.count > 7 && header.prefix(7).lowercased() == "bearer " ? String(header.dropFirst(7)) : nil
        return try await Self.$token.withValue(token) {
            try await next(request, body, metadata)
        }
    }
}
