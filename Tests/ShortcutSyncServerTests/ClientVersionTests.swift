import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncClient
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// What `ShortcutSyncClient` asks a pull to wait for (DESIGN §5): the account version its own
/// push answered, or the one a stream's `event: changed` names (`{"version": N}`). Spoken
/// through `OpenAPISyncTransport` to a scripted service, so the generated client's reading of
/// the answers and the stream's parser are what is tested, without a database.
@Suite struct ClientVersionTests {
    static func client(_ service: ScriptedService, pushBatchSize: Int = 500) throws -> ShortcutSyncClient {
        var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: ClientLibraryTests.storage())
        configuration.initialBackoff = .milliseconds(20)
        configuration.pushBatchSize = pushBatchSize
        let transport = OpenAPISyncTransport(serverURL: URL(string: "http://scripted.invalid")!, deviceToken: "device", transport: service)
        return try ShortcutSyncClient(configuration: configuration, transport: transport)
    }

    /// Two batches answered with versions 40 and 41: the pull that follows waits for 41, the
    /// version of the last push. A sync with nothing to push does not wait; a version beyond
    /// the spec's bounds (a defective answer) is not sent, so the pull is not refused.
    @Test func syncWaitsForTheVersionItsLastPushAnswered() async throws {
        let service = ScriptedService(versions: [40, 41, 1 << 60])
        let client = try Self.client(service, pushBatchSize: 1)
        try await client.donate(ClientLibraryTests.soup("tomato"))
        try await client.donate(ClientLibraryTests.soup("leek"))

        try await client.sync()
        #expect(service.pushes == 2)
        #expect(service.pulls.map(\.waitFor) == [41])
        #expect(service.pulls.map(\.timeout) == [10_000])
        #expect(try await client.pendingCount() == 0)

        try await client.sync()
        #expect(service.pushes == 2)
        #expect(service.pulls.map(\.waitFor) == [41, nil])

        try await client.donate(ClientLibraryTests.soup("kale"))
        try await client.sync()
        #expect(service.pulls.map(\.waitFor) == [41, nil, nil])
        #expect(try await client.pendingCount() == 0)
    }

    /// The stream says `{"version": 7}`: the running client pulls waiting for 7. A `changed`
    /// event whose data names no version (or names one beyond the bounds) still makes it pull,
    /// without waiting; comments and other events make it do nothing.
    @Test func aRunningClientWaitsForTheVersionTheStreamNames() async throws {
        let service = ScriptedService(versions: [], stream: """
            : keep-alive

            event: changed
            data: {"version": 7}

            event: other
            data: {"version": 8}

            event: changed
            data: {"position": 9}

            event: changed
            data: {"version": 9007199254740993}

            event: changed
            data: {"version": 12}


            """)
        let client = try Self.client(service)
        let running = Task { try await client.run() }
        defer { running.cancel() }
        // The pull of the first sync (nothing pushed) and the one after connecting wait for
        // nothing; then one pull per `changed` event, in order (the first two may come between).
        try await eventually("every changed event is pulled for") { service.pulls.count == 6 }
        let waits = service.pulls.map(\.waitFor)
        #expect(waits.compactMap { $0 } == [7, 12])
        #expect(waits.filter { $0 == nil }.count == 4)
        try await Task.sleep(for: .milliseconds(100))
        #expect(service.pulls.count == 6, "nothing else makes the client pull")
        #expect(service.streams == 1, "the stream stays open (the script holds it)")
    }
}

/// A service that answers pushes with scripted account versions (and `lastAcceptedSeq` the last
/// seq of the batch), pulls with an empty whole view, and a stream with a scripted body that
/// then stays open; it records what each pull asked for.
final class ScriptedService: ClientTransport {
    struct Pull: Sendable, Hashable {
        var waitFor: Int64?
        var timeout: Int?
    }

    /// The part of a push's body the answer needs: its events' seqs.
    struct SentPush: Decodable {
        struct SentEvent: Decodable {
            var seq: Int64
        }

        var events: [SentEvent]
    }

    private let state: Mutex<(versions: [Int64], pushes: Int, pulls: [Pull], streams: Int, accepted: Int64)>
    private let stream: String

    init(versions: [Int64], stream: String = "") {
        state = Mutex((versions, 0, [], 0, 0))
        self.stream = stream
    }

    var pushes: Int { state.withLock { $0.pushes } }
    var pulls: [Pull] { state.withLock { $0.pulls } }
    var streams: Int { state.withLock { $0.streams } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        switch operationID {
        case "push":
            let sent = try JSONDecoder().decode(SentPush.self, from: try await Data(collecting: body ?? HTTPBody(), upTo: 1 << 20))
            let lastSeq = sent.events.last?.seq ?? 0
            let version = state.withLock { state -> Int64 in
                state.pushes += 1
                state.accepted = max(state.accepted, lastSeq)
                return state.versions.isEmpty ? 0 : state.versions.removeFirst()
            }
            return Self.json(#"{"lastAcceptedSeq": \#(lastSeq), "version": \#(version)}"#)
        case "pull":
            let query = URLComponents(string: request.path ?? "")?.queryItems ?? []
            let value = { (name: String) in query.first { $0.name == name }?.value }
            let pull = Pull(waitFor: value("waitFor").flatMap { Int64($0) }, timeout: value("timeout").flatMap { Int($0) })
            // What it accepted, as a service that lost nothing answers (a lower one is a restore).
            let accepted = state.withLock { state -> Int64 in
                state.pulls.append(pull)
                return state.accepted
            }
            return Self.json("""
                {"cursor": "c", "reset": true, "more": false, "lastAcceptedSeq": \(accepted), "hlc": {"wallMillis": 0, "counter": 0},
                 "shortcuts": {"upserted": [], "removed": []}, "voiceShortcuts": {"upserted": [], "removed": []}}
                """)
        case "stream":
            let first = state.withLock { state -> Bool in
                state.streams += 1
                return state.streams == 1
            }
            guard first else {
                try await Task.sleep(for: .seconds(3600))
                throw CancellationError()
            }
            // The scripted events, then a connection that stays open until the client goes.
            let script = stream
            let open = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                continuation.yield(ArraySlice(script.utf8))
                let hold = Task {
                    try? await Task.sleep(for: .seconds(3600))
                    continuation.finish()
                }
                continuation.onTermination = { _ in hold.cancel() }
            }
            var response = HTTPResponse(status: .ok)
            response.headerFields[.contentType] = "text/event-stream"
            return (response, HTTPBody(open, length: .unknown, iterationBehavior: .single))
        default:
            return (HTTPResponse(status: .notFound), nil)
        }
    }

    static func json(_ text: String) -> (HTTPResponse, HTTPBody?) {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json"
        return (response, HTTPBody(text))
    }
}
