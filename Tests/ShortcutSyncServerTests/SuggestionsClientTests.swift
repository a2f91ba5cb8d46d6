import Foundation
import OpenAPIAsyncHTTPClient
import PostgresNIO
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization
import Testing

/// The client library's side of suggestions: donations carry the device's offset from UTC,
/// `suggestions(at:limit:)` asks the service, and the last answer is kept for offline use.
@Suite struct SuggestionsClientTests {
    /// A service that cannot be reached.
    struct Unreachable: SyncTransport {
        func push(_ events: [Event]) async throws -> PushOutcome { throw SyncTransportError.retryLater(retryAfter: nil) }
        func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
            throw SyncTransportError.retryLater(retryAfter: nil)
        }
        func pokes() async throws -> AsyncThrowingStream<Int64, any Error> { throw SyncTransportError.retryLater(retryAfter: nil) }
        func suggestions(at: Int64?, limit: Int, utcOffsetMinutes: Int, places: [String]) async throws -> SuggestionsAnswer {
            throw SyncTransportError.retryLater(retryAfter: nil)
        }
    }

    static let start: Int64 = 1_767_571_200_000  // Monday 2026-01-05 00:00 UTC
    static let hour: Int64 = 3_600_000
    static let week = 7 * 24 * hour

    @Test func donationsCarryTheOffsetAndTheLastAnswerIsKeptForOffline() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let clock = Mutex<Int64>(Self.start)
            var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
            configuration.now = { clock.withLock { $0 } }
            // Tokyo: a Friday at 19:10 local time is 10:10 UTC.
            configuration.utcOffsetMinutes = { _ in 540 }
            let client = try ShortcutSyncClient(
                configuration: configuration,
                transport: OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: phone.token, transport: AsyncHTTPClientTransport()),
                logger: TestDatabase.shared.logger)
            for week in 0..<4 {
                let friday = Self.start + Int64(week) * Self.week + 4 * 24 * Self.hour
                // In time order: the device's clock only moves forward.
                clock.withLock { $0 = friday + 1 * Self.hour }
                try await client.donate(ClientLibraryTests.soup("leek"))
                clock.withLock { $0 = friday + 10 * Self.hour + 600_000 }
                try await client.donate(ClientLibraryTests.soup("tomato"))
            }
            try await client.sync()
            let offsets = try await server.sql.query("""
                SELECT DISTINCT (body->>'utcOffsetMinutes')::int4 FROM events WHERE device_id = \(phone.id) AND type = 'donation'
                """).decode(Int32.self).collectAll()
            #expect(offsets == [540])

            let nextFridayMillis: Int64 = Self.start + 4 * Self.week + 4 * 24 * Self.hour + 10 * Self.hour + 900_000
            let nextFriday = Date(timeIntervalSince1970: Double(nextFridayMillis) / 1000)
            let online = try #require(try await client.suggestions(at: nextFriday, limit: 2))
            #expect(!online.offline)
            #expect(online.suggestions.first?.identifier == "tomato")
            #expect(online.suggestions.first?.reason == "often on Friday evenings on this iPhone")
            #expect(online.suggestions.count <= 2)

            // Reopened with the service out of reach, the app still has what it was told.
            let offline = try ShortcutSyncClient(configuration: configuration, transport: Unreachable(), logger: TestDatabase.shared.logger)
            let kept = try #require(try await offline.suggestions(at: nextFriday))
            #expect(kept.offline)
            #expect(kept.suggestions == online.suggestions)
            // A refusal is not hidden behind the kept answer.
            await #expect(throws: (any Error).self) { try await client.suggestions(limit: 21) }
        }
    }
}
