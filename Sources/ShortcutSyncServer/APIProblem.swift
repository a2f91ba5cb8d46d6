import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ShortcutSyncDomain
import ShortcutSyncStore

/// An error answer (RFC 9457), thrown by handlers and rendered at the edge by `ProblemMiddleware`;
/// as Hummingbird's `HTTPResponseError`, router middlewares throw it and Hummingbird renders it.
public struct APIProblem: HTTPResponseError, Sendable, Hashable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var title: String
    public var detail: String?
    public var errors: [FieldError] = []
    public var expectedSeq: Int64?
    public var lastAcceptedSeq: Int64?
    /// Seconds after which the request may be tried again (`Retry-After`), with 503 and 429.
    public var retryAfter: Int?
    /// The methods the path answers (`Allow`), with 405.
    public var allowedMethods: [String] = []
    /// Which per-person bound (DESIGN §5) the request would break, with 409: `devicesPerAccount`,
    /// `shortcutsPerAccount`, `groupsPerShortcut`, `learningChangesPerScope`.
    public var limit: String?

    public var description: String { "\(status.code) \(title)" + (detail.map { ": \($0)" } ?? "") }

    /// A stable `type` URI per status, naming the kind of problem.
    public var type: String {
        if limit != nil { return "https://shortcut-sync.invalid/problems/limit-reached" }
        return switch status.code {
        case 400: "https://shortcut-sync.invalid/problems/malformed-request"
        case 401: "https://shortcut-sync.invalid/problems/unauthorized"
        case 404: "https://shortcut-sync.invalid/problems/not-found"
        case 405: "https://shortcut-sync.invalid/problems/method-not-allowed"
        case 408: "https://shortcut-sync.invalid/problems/request-timeout"
        case 409: "https://shortcut-sync.invalid/problems/conflict"
        case 413: "https://shortcut-sync.invalid/problems/too-large"
        case 415: "https://shortcut-sync.invalid/problems/unsupported-media-type"
        case 422: "https://shortcut-sync.invalid/problems/invalid-input"
        case 503: "https://shortcut-sync.invalid/problems/unavailable"
        default: "about:blank"
        }
    }

    static let unauthorized = APIProblem(status: 401, title: "Unauthorized",
                                         detail: "a valid bearer token of the right kind is required")

    static func notFound(_ detail: String) -> APIProblem {
        APIProblem(status: 404, title: "Not Found", detail: detail)
    }

    static func methodNotAllowed(_ method: String, path: String, allowed: [String]) -> APIProblem {
        var problem = APIProblem(status: 405, title: "Method Not Allowed",
                                 detail: "\(path) answers \(allowed.joined(separator: ", ")), not \(method)")
        problem.allowedMethods = allowed
        return problem
    }

    /// The database cannot serve the request now; the client should try again shortly.
    static func unavailable(_ detail: String = "the database is unavailable; try again shortly") -> APIProblem {
        var problem = APIProblem(status: 503, title: "Service Unavailable", detail: detail)
        problem.retryAfter = 1
        return problem
    }

    /// `429` with `Retry-After`: the caller asks more than it may now.
    static func tooManyRequests(_ detail: String, retryAfter: Int) -> APIProblem {
        var problem = APIProblem(status: 429, title: "Too Many Requests", detail: detail)
        problem.retryAfter = retryAfter
        return problem
    }

    /// The account pushed more than its budget allows (`Budget`): nothing of this push was
    /// stored; the device should send it again after `Retry-After` seconds.
    static func overBudget(retryAfter: Int, _ budget: Budget) -> APIProblem {
        tooManyRequests("this account pushes more than \(Int(budget.perSecond)) events a second (\(budget.burst) at once); "
                            + "nothing of this push was stored: send it again in \(retryAfter) s", retryAfter: retryAfter)
    }

    /// The device pulled or asked for suggestions more than its budget allows.
    static func readsOverBudget(retryAfter: Int, _ budget: Budget) -> APIProblem {
        tooManyRequests("this device reads (pulls and suggestions) more than \(Int(budget.perSecond)) times a second "
                            + "(\(budget.burst) at once): ask again in \(retryAfter) s", retryAfter: retryAfter)
    }

    /// The account signed devices in (or out: `what`) more than its budget allows: nothing was
    /// stored, nothing announced.
    static func deviceChangesOverBudget(_ what: String, retryAfter: Int, _ budget: Budget) -> APIProblem {
        tooManyRequests("this account \(what) more than \(Int((budget.perSecond * 3_600).rounded())) devices an hour "
                            + "(\(budget.burst) at once); nothing was stored: try again in \(retryAfter) s", retryAfter: retryAfter)
    }

    /// The account already has its limit of pushes under way (`PushesInFlight`).
    static func tooManyPushesAtOnce(_ limit: Int) -> APIProblem {
        tooManyRequests("this account already has \(limit) push\(limit == 1 ? "" : "es") under way; nothing of this push was stored: "
                            + "send it again once one of them is answered", retryAfter: 1)
    }

    static func malformed(_ detail: String) -> APIProblem {
        APIProblem(status: 400, title: "Malformed Request", detail: detail)
    }

    static func invalid(_ errors: [FieldError]) -> APIProblem {
        APIProblem(status: 422, title: "Invalid Input",
                   detail: errors.count == 1 ? errors[0].description : "\(errors.count) fields are invalid; see errors",
                   errors: errors)
    }

    static func tooLarge(_ detail: String, pointer: String? = nil) -> APIProblem {
        APIProblem(status: 413, title: "Payload Too Large", detail: detail,
                   errors: pointer.map { [FieldError(pointer: $0, detail: detail)] } ?? [])
    }

    /// A per-person bound (DESIGN §5) the request would break: nothing of it was stored.
    static func limitReached(_ limit: PersonLimit) -> APIProblem {
        var problem = APIProblem(status: 409, title: "Limit Reached", detail: limit.description)
        problem.limit = limit.name
        problem.errors = limit.pointer.map { [FieldError(pointer: $0, detail: limit.description)] } ?? []
        return problem
    }

    /// The store's refusal of a push, as the 409 of DESIGN §4.
    static func conflict(_ error: AppendError) -> APIProblem {
        var problem = APIProblem(status: 409, title: "Conflict", detail: error.description)
        switch error {
        case .seqNotContiguous(let index, let expected, let last):
            problem.expectedSeq = expected
            problem.lastAcceptedSeq = last
            problem.errors = [FieldError(pointer: "/events/\(index)/seq", detail: "expected seq \(expected)")]
        case .seqReused(let index, let seq, let last):
            problem.expectedSeq = last + 1
            problem.lastAcceptedSeq = last
            problem.errors = [FieldError(pointer: "/events/\(index)/seq", detail: "seq \(seq) was accepted with another id")]
        case .idReused(let index, _):
            problem.errors = [FieldError(pointer: "/events/\(index)/id", detail: "this id was accepted with another seq")]
        case .accountUnknown:
            break
        }
        return problem
    }

    /// The header fields that go with the problem: its content type, and `Allow`, `Retry-After`
    /// or `WWW-Authenticate` where the status calls for one.
    var headerFields: HTTPFields {
        var fields: HTTPFields = [.contentType: "application/problem+json"]
        if status == 401 { fields[.wwwAuthenticate] = "Bearer" }
        if let retryAfter { fields[.retryAfter] = String(retryAfter) }
        if !allowedMethods.isEmpty { fields[.allow] = allowedMethods.joined(separator: ", ") }
        return fields
    }

    /// The problem+json document.
    var json: [UInt8] {
        var object: [String: Any] = ["type": type, "title": title, "status": status.code]
        if let detail { object["detail"] = detail }
        if !errors.isEmpty { object["errors"] = errors.map { ["pointer": $0.pointer, "detail": $0.detail] } }
        if let expectedSeq { object["expectedSeq"] = expectedSeq }
        if let lastAcceptedSeq { object["lastAcceptedSeq"] = lastAcceptedSeq }
        if let limit { object["limit"] = limit }
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}

extension DecodingError {
    /// The JSON pointer of the place the decoder failed at, and what was wrong there.
    var fieldError: FieldError {
        func pointer(_ path: [any CodingKey]) -> String {
            path.map { key in
                "/" + (key.intValue.map(String.init) ?? key.stringValue)
                    .replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            }.joined()
        }
        switch self {
        case .keyNotFound(let key, let context):
            return FieldError(pointer: pointer(context.codingPath + [key]), detail: "is required")
        case .typeMismatch(let type, let context):
            return FieldError(pointer: pointer(context.codingPath), detail: "must be \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            return FieldError(pointer: pointer(context.codingPath), detail: "must be \(Self.describe(type)), not null")
        case .dataCorrupted(let context):
            return FieldError(pointer: pointer(context.codingPath), detail: context.debugDescription)
        @unknown default:
            return FieldError(pointer: "", detail: "\(self)")
        }
    }

    /// Malformed JSON, as opposed to well-formed JSON of the wrong shape.
    var isSyntaxError: Bool {
        if case .dataCorrupted(let context) = self, context.codingPath.isEmpty,
           context.underlyingError != nil || context.debugDescription.contains("not valid JSON") {
            return true
        }
        return false
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int32.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is UUID.Type: "a UUID"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : (String(describing: type).hasPrefix("Dictionary") ? "an object" : "of type \(type)")
        }
    }
}

extension APIProblem {
    /// The problem as a Hummingbird response (`HTTPResponseError`): router middlewares throw it.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response
    }

    var response: Response {
        Response(status: status, headers: headerFields, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }
}
