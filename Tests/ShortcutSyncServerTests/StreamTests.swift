import AsyncHTTPClient
import Hummingbird
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Synchronization
import Foundation
import ShortcutSyncAPI
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// Collects what arrives on one live stream, so a test can wait for what it expects.
final class StreamRecorder: Sendable {
    private let received = Mutex("")
    private let ended = Mutex(false)

    var text: String { received.withLock { $0 } }
    /// Whether the server ended the stream.
    var hasEnded: Bool { ended.withLock { $0 } }

    /// Reads the stream until it ends or the task is cancelled.
    func record(_ response: HTTPClientResponse) async throws {
        for try await chunk in response.body {
            received.withLock { $0 += String(buffer: chunk) }
        }
        ended.withLock { $0 = true }
    }

    /// Waits until `condition` holds for the text received so far, at most `timeout`.
    func wait(timeout: Duration = .seconds(15), until condition: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while !condition(text) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return text
    }
}

/// What a `NotificationSource` yielded, in order.
final class HeardNotifications: Sendable {
    private let events = Mutex<[NotificationSource.Event]>([])

    var all: [NotificationSource.Event] { events.withLock { $0 } }

    func append(_ event: NotificationSource.Event) {
        events.withLock { $0.append(event) }
    }
}

/// The live stream wakes exactly the devices whose view changed.
@Suite struct StreamTests {
    static func open(_ server: TestServer, token: String) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: server.baseURL.absoluteString + "/v1/sync/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return try await HTTPClient.shared.execute(request, timeout: .seconds(60))
    }

    /// Pokes reach the streams of other servers through one coalesced `NOTIFY` (DESIGN §6), and a
    /// server does not poke its streams a second time when it hears its own announcement.
    @Test func anotherServersAnnouncementPokesTheStreamAndAServersOwnIsNotHeardTwice() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let macStream = try await Self.open(server, token: mac.token)
            let recorder = StreamRecorder()
            // Another server on the same database: its announcer (its hub does not listen here).
            let logger = TestDatabase.shared.logger
            let otherHub = NotificationHub(notifications: NotificationSource(.dedicated(try server.database.connectionConfiguration()), logger: logger),
                                           logger: logger, signedIn: { _ in [] })
            let other = ChangeAnnouncer(projections: ProjectionStore(client: server.sql, logger: logger), hub: otherHub, logger: logger)
            // What the database announces, to know when this server's own NOTIFY for the push went out.
            let heard = HeardNotifications()
            let source = NotificationSource(.dedicated(try server.database.connectionConfiguration()), channels: [.projection], logger: logger)
            try await source.withEvents { events in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await event in events { heard.append(event) } }
                    group.addTask { try await recorder.record(macStream) }
                    group.addTask { try await other.run() }
                    try await eventually("the test listens") { heard.all.contains(.listening(resumed: false)) }
                    #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))

                    phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                    let version = try await phone.push()
                    #expect(try await recorder.wait { $0.contains("{\"version\": \(version)}") }.contains("{\"version\": \(version)}"))
                    try await eventually("this server announced the push to the others") {
                        heard.all.contains { if case .projection(let n) = $0 { n.versions[account.id] == version } else { false } }
                    }
                    // Its own announcement reached this server's hub before the other server's does: skipped.
                    other.announce(account: account.id, version: version + 100, committedAt: Int64(Date().timeIntervalSince1970 * 1000))
                    let received = try await recorder.wait { $0.contains("{\"version\": \(version + 100)}") }
                    #expect(received.contains("{\"version\": \(version + 100)}"), "the other server's announcement arrived")
                    #expect(received.components(separatedBy: "event: changed").count - 1 == 2, "\(received)")
                    group.cancelAll()
                }
            }
        }
    }

    @Test func aStreamReceivesChangedAfterAnotherDevicesPush() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let stranger = try await server.createDevice(accountToken: try await server.createAccount().token)

            let macStream = try await Self.open(server, token: mac.token)
            #expect(macStream.status == .ok)
            #expect(macStream.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
            let strangerStream = try await Self.open(server, token: stranger.token)
            let macRecorder = StreamRecorder(), strangerRecorder = StreamRecorder()

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await macRecorder.record(macStream) }
                group.addTask { try await strangerRecorder.record(strangerStream) }
                // The first comment says the subscription is in place.
                #expect(try await macRecorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                #expect(try await strangerRecorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))

                phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                let version = try await phone.push()
                let received = try await macRecorder.wait { $0.contains("event: changed") }
                #expect(received.contains("event: changed\ndata: {\"version\": \(version)}"))

                // The other account's device hears only keep-alives (they come every second in tests).
                let heard = try await strangerRecorder.wait { $0.components(separatedBy: ": keep-alive").count > 2 }
                #expect(heard.components(separatedBy: ": keep-alive").count > 2)
                #expect(!heard.contains("changed"))
                group.cancelAll()
            }
        }
    }

    @Test func streamsNeedADeviceToken() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            #expect(try await server.raw(.GET, "/v1/sync/stream", token: account.token).status == 401)
        }
    }
}
