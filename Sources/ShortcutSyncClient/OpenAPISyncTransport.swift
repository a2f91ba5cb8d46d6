import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// `SyncTransport` over the client generated from `openapi.yaml`, on any OpenAPI transport:
/// `AsyncHTTPClientTransport` on Linux, `URLSessionTransport` on Apple's platforms.
public struct OpenAPISyncTransport: SyncTransport {
    let client: Client

    public init(serverURL: URL, deviceToken: String, transport: any ClientTransport) {
        client = Client(serverURL: serverURL, transport: transport,
                        middlewares: [BearerToken(token: deviceToken), TraceContext(), RetryLaterMiddleware()])
    }

    public func push(_ events: [Event]) async throws -> PushOutcome {
        switch try await client.push(body: .json(.init(events: events))) {
        case .ok(let ok):
            let answer = try ok.body.json
            return .accepted(lastAcceptedSeq: answer.lastAcceptedSeq, version: answer.version)
        case .default(let status, let problem):
            let body = try? problem.body.applicationProblemJson
            if status == 409, let expected = body?.expectedSeq { return .seqMismatch(expectedSeq: expected) }
            if status == 409, let index = body.flatMap(Self.reusedIdIndex) { return .idAlreadyStored(index: index) }
            throw Self.error(status: status, detail: body.map(Self.detail) ?? "")
        }
    }

    public func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
        switch try await client.pull(query: .init(cursor: cursor, waitFor: version, timeout: timeoutMillis.map(Int32.init))) {
        case .ok(let ok):
            return PullAnswer(try ok.body.json)
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func devices() async throws -> DevicesAnswer {
        switch try await client.listDevices() {
        case .ok(let ok):
            return DevicesAnswer(try ok.body.json)
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func suggestions(at: Int64?, limit: Int, utcOffsetMinutes: Int, places: [String]) async throws -> SuggestionsAnswer {
        switch try await client.suggestions(query: .init(limit: Int32(clamping: limit), at: at, utcOffsetMinutes: Int32(clamping: utcOffsetMinutes),
                                                         place: places.isEmpty ? nil : places)) {
        case .ok(let ok):
            return SuggestionsAnswer(try ok.body.json)
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func habits(bundleId: String, identifier: String) async throws -> HabitsAnswer? {
        switch try await client.suggestionHabits(query: .init(bundleId: bundleId, identifier: identifier)) {
        case .ok(let ok):
            return HabitsAnswer(try ok.body.json)
        case .default(let status, let problem):
            if status == 404 { return nil }
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
        .relaying(try await tracedPokes()) { $0.version }
    }

    public func tracedPokes() async throws -> AsyncThrowingStream<Poke, any Error> {
        let body: HTTPBody
        switch try await client.stream() {
        case .ok(let ok):
            body = try ok.body.textEventStream
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
        return .relaying(body.asDecodedServerSentEvents()) { event in
            event.event == "changed" ? ChangedMessage.poke(in: event.data) : nil
        }
    }

    public func registerPushToken(_ token: String, topic: String, environment: String) async throws {
        switch try await client.registerPushToken(body: .json(.init(service: "apns", token: token, topic: topic, environment: environment))) {
        case .noContent:
            return
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    public func deletePushToken() async throws {
        switch try await client.deletePushToken() {
        case .noContent:
            return
        case .default(let status, let problem):
            throw Self.error(status: status, detail: (try? problem.body.applicationProblemJson).map(Self.detail) ?? "")
        }
    }

    static func error(status: Int, detail: String) -> SyncTransportError {
        switch status {
        case 429, 503: .retryLater(retryAfter: nil)
        case 400..<500: .refused(status: status, detail: detail)
        default: .failed(status: status, detail: detail)
        }
    }

    /// The batch index of the event whose id the service holds with another seq: the 409 whose
    /// only error points at `/events/<index>/id` (and names no `expectedSeq`, nor a limit).
    static func reusedIdIndex(_ problem: Components.Schemas.Problem) -> Int? {
        guard problem.expectedSeq == nil, problem.limit == nil, let errors = problem.errors, errors.count == 1 else { return nil }
        let parts = errors[0].pointer.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "events", parts[3] == "id", let index = Int(parts[2]), index >= 0 else { return nil }
        return index
    }

    static func detail(_ problem: Components.Schemas.Problem) -> String {
        ([problem.detail ?? problem.title] + (problem.errors ?? []).map { "\($0.pointer): \($0.detail)" }).joined(separator: "; ")
    }
}
