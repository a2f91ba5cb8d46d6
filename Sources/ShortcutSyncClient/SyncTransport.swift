import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// How a push came out.
public enum PushOutcome: Sendable, Hashable {
    /// Every event up to `lastAcceptedSeq` is stored; `position` covers them (a pull's `waitFor`).
    case accepted(lastAcceptedSeq: Int64, position: Int64)
    /// The service expects `expectedSeq` next: the batch did not continue its seqs (409).
    case seqMismatch(expectedSeq: Int64)
}

/// A pull's answer, in domain terms.
public struct PullAnswer: Sendable, Hashable {
    public var cursor: String
    /// The answer begins the whole view: what the device holds is replaced.
    public var reset: Bool
    /// The answer stopped at its page size: pull again with `cursor` at once for the rest.
    public var more: Bool
    public var changes: ViewChanges
    public var serviceClock: HLCTimestamp
    public var lastAcceptedSeq: Int64
}

extension PullAnswer {
    /// The domain's reading of a pull's wire answer (the views share their JSON form).
    public init(_ answer: Components.Schemas.PullResponse) throws {
        let decoder = JSONDecoder(), encoder = JSONEncoder()
        var changes = ViewChanges()
        changes.upsertedShortcuts = try decoder.decode([ShortcutView].self, from: encoder.encode(answer.shortcuts.upserted))
        changes.removedShortcuts = try decoder.decode([ShortcutID].self, from: encoder.encode(answer.shortcuts.removed))
        changes.upsertedVoiceShortcuts = try decoder.decode([VoiceShortcutView].self, from: encoder.encode(answer.voiceShortcuts.upserted))
        changes.removedVoiceShortcuts = answer.voiceShortcuts.removed.compactMap(UUID.init(uuidString:))
        self.init(cursor: answer.cursor, reset: answer.reset, more: answer.more, changes: changes,
                  serviceClock: HLCTimestamp(wallMillis: answer.hlc.wallMillis, counter: answer.hlc.counter),
                  lastAcceptedSeq: answer.lastAcceptedSeq)
    }
}

/// Why a request did not go through.
public enum SyncTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The service is unavailable now (503, 429): try again, after `retryAfter` seconds if given.
    case retryLater(retryAfter: Int?)
    /// The service refused the request for good (4xx other than 409, 429): retrying the same
    /// request cannot help. `detail` is what it said.
    case refused(status: Int, detail: String)
    /// Any other answer (5xx): worth retrying after a while.
    case failed(status: Int, detail: String)

    public var description: String {
        switch self {
        case .retryLater(let seconds): "the service is unavailable now" + (seconds.map { ", retry after \($0) s" } ?? "")
        case .refused(let status, let detail): "refused (\(status)): \(detail)"
        case .failed(let status, let detail): "failed (\(status)): \(detail)"
        }
    }
}

/// How a client talks to the service. `OpenAPISyncTransport` is the real one; tests and apps
/// may wrap it.
public protocol SyncTransport: Sendable {
    func push(_ events: [Event]) async throws -> PushOutcome
    func pull(cursor: String?, waitFor position: Int64?, timeoutMillis: Int?) async throws -> PullAnswer
    /// The device's stream of pokes (`GET /v1/sync/stream`): yields once per `changed` event,
    /// finishes when the connection ends.
    func pokes() async throws -> AsyncThrowingStream<Void, any Error>
}

/// `SyncTransport` over the client generated from `openapi.yaml`, on any OpenAPI transport:
/// `AsyncHTTPClientTransport` on Linux, `URLSessionTransport` on Apple's platforms.
public struct OpenAPISyncTransport: SyncTransport {
    let client: Client

    public init(serverURL: URL, deviceToken: String, transport: any ClientTransport) {
        client = Client(serverURL: serverURL, transport: transport,
                        middlewares: [BearerToken(token: deviceToken), RetryLaterMiddleware()])
    }

    public func push(_ events: [Event]) async throws -> PushOutcome {
        let wire = try JSONDecoder().decode([Components.Schemas.Event].self, from: JSONEncoder().encode(events))
        switch try await client.push(body: .json(.init(events: wire))) {
        case .ok(let ok):
            let answer = try ok.body.json
            return .accepted(lastAcceptedSeq: answer.lastAcceptedSeq, position: answer.position)
        case .default(let status, let problem):
            let body = try? problem.body.applicationProblemJson
            if status == 409, let expected = body?.expectedSeq { return .seqMismatch(expectedSeq: expected) }
            throw Self.error(status: status, detail: body.map(Self.detail) ?? "")
        }
    }

    public func pull(cursor: String?, waitFor position: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
        switch try await client.pull(query: .init(cursor: cursor, waitFor: position, timeout: timeoutMillis.map(Int32.init))) {
        case .ok(let ok):
            return try PullAnswer(try ok.body.json)
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func pokes() async throws -> AsyncThrowingStream<Void, any Error> {
        let body: HTTPBody
        switch try await client.stream() {
        case .ok(let ok):
            body = try ok.body.textEventStream
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
        let events = body.asDecodedServerSentEvents()
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events where event.event == "changed" {
                        continuation.yield()
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    static func error(status: Int, detail: String) -> SyncTransportError {
        switch status {
        case 429, 503: .retryLater(retryAfter: nil)
        case 400..<500: .refused(status: status, detail: detail)
        default: .failed(status: status, detail: detail)
        }
    }

    static func detail(_ problem: Components.Schemas.Problem) -> String {
        ([problem.detail ?? problem.title] + (problem.errors ?? []).map { "\($0.pointer): \($0.detail)" }).joined(separator: "; ")
    }
}

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
