import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
import ShortcutSyncStore

/// Turns every error of an operation into an `application/problem+json` answer.
///
/// Handlers throw `APIProblem`. A request the generated code cannot decode becomes 400 (not
/// JSON at all) or 422 (JSON of the wrong shape) with a pointer to the field at fault; one the
/// OpenAPI runtime refused for another reason keeps the status the runtime gave it (415 for a
/// body that is not JSON, 400 for a missing parameter). A database that is down, restarting or
/// overloaded is a 503 with `Retry-After` (while it is known to be away, `DatabaseReachResponder`
/// answers so before any operation runs). Anything else is a 500 that is logged and
/// not explained to the caller. Only 500s are logged as errors: the caller's mistakes are not.
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
            var response = HTTPResponse(status: problem.status)
            response.headerFields = problem.headerFields
            return (response, HTTPBody(problem.json))
        }
    }

    func problem(for error: any Error, operationID: String) -> APIProblem {
        let serverError = error as? ServerError
        let cause = serverError?.underlyingError ?? error
        let metadata: Logger.Metadata = ["operation": "\(operationID)", "error": "\(String(reflecting: cause))"]
        switch cause {
        case let problem as APIProblem:
            logger.debug("request refused", metadata: metadata.merging(["status": "\(problem.status.code)"]) { $1 })
            return problem
        case let decoding as DecodingError:
            logger.debug("request body refused", metadata: metadata)
            return decoding.isSyntaxError ? .malformed("the body is not valid JSON") : .invalid([decoding.fieldError])
        case is CancellationError where Task.isCancelled:
            // The database went while the request waited on it: `DatabaseReach.whileReachable`
            // cancelled it.
            return .unavailable()
        case _ where DatabaseAvailability.isUnavailable(cause):
            logger.log(level: .warning, "the database could not serve a request", error: cause, metadata: ["operation": "\(operationID)"])
            return .unavailable()
        default:
            if let serverError, (400..<500).contains(serverError.httpStatus.code) {
                logger.debug("request refused by the OpenAPI runtime", metadata: metadata)
                return APIProblem(status: serverError.httpStatus, title: serverError.httpStatus.reasonPhrase,
                                  detail: serverError.causeDescription)
            }
            logger.log(level: .error, "request failed", error: cause, metadata: ["operation": "\(operationID)"])
            return APIProblem(status: 500, title: "Internal Server Error", detail: "the request failed; it has been logged")
        }
    }
}
