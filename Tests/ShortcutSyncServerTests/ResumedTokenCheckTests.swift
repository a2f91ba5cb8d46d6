import Foundation
import NIOHTTP1
import PostgresNIO
@testable import ShortcutSyncServer
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// Issue 65, item 9: when a `LISTEN` comes back (on a cluster, any node's), what was notified
/// meanwhile is lost, but most cached tokens are still good: they are checked against the
/// database in bulk, and only those it no longer knows are forgotten — a node that flaps no
/// longer makes every device's next request a token lookup at once.
@Suite struct ResumedTokenCheckTests {
    /// The hub alone, its events given: of two cached tokens, the one the database still knows
    /// is kept, the other forgotten; a check that fails forgets both.
    @Test func aResumeKeepsTheTokensTheDatabaseStillKnows() async throws {
        let kept = [UInt8](repeating: 1, count: 32), gone = [UInt8](repeating: 2, count: 32)
        let asked = AskedHashes()
        let failing = AskedHashes()
        for check in [asked, failing] {
            let events = GivenEvents()
            let hub = NotificationHub(notifications: events, logger: .init(label: "test"), keepAliveInterval: .seconds(3600),
                                      signedIn: { Set($0.map(\.device)) },
                                      tokensStillValid: { hashes in
                                          check.record(hashes)
                                          guard check !== failing else { throw CheckFailed() }
                                          return [kept]
                                      },
                                      resumePokeSpread: .milliseconds(10))
            let running = Task { try await hub.run() }
            defer { running.cancel() }
            events.continuation.yield(.connected)
            events.continuation.yield(.listening(resumed: false))
            let account = UUID()
            hub.tokens.remember(.device(device: UUID(), account: account), tokenHash: kept, lookedUpAt: hub.tokens.generation)
            hub.tokens.remember(.device(device: UUID(), account: account), tokenHash: gone, lookedUpAt: hub.tokens.generation)
            events.continuation.yield(.listening(resumed: true))
            try await eventually("the cached tokens are checked") { check.calls == 1 }
            #expect(Set(check.hashes) == [kept, gone], "both were checked, in one call")
            if check === failing {
                try await eventually("a check that fails forgets every token") { hub.tokens.count == 0 }
            } else {
                try await eventually("the token gone is forgotten") { hub.tokens.caller(tokenHash: gone) == nil }
                #expect(hub.tokens.caller(tokenHash: kept) != nil, "the token still good is kept")
            }
        }
    }

    /// A lookup under way as the `LISTEN` came back may have read before a sign-out it will not
    /// hear of: it is not kept.
    @Test func aLookupUnderWayAsTheListenCameBackIsNotKept() {
        let cache = TokenCache()
        let began = cache.generation
        _ = cache.distrust()
        cache.remember(.device(device: UUID(), account: UUID()), tokenHash: [UInt8](repeating: 3, count: 32), lookedUpAt: began)
        #expect(cache.count == 0)
    }

    /// A whole service: a device signed out in the database while its notification is not heard
    /// (the row changed by hand) keeps working from the cache; once the `LISTEN` session is
    /// ended and comes back, its token is refused, and the other device's still works.
    @Test func aSignOutMissedWhileTheListenWasDownIsFoundWhenItComesBack() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let tablet = try await server.createDevice(accountToken: account.token)
            for device in [phone, tablet] {
                #expect(try await server.request(.GET, "/v1/sync/pull", token: device.token).status == 200)
            }
            try await server.sql.query("UPDATE devices SET token_hash = NULL WHERE device_id = \(tablet.id)")
            #expect(try await server.request(.GET, "/v1/sync/pull", token: tablet.token).status == 200,
                    "no sign-out was notified: the cached token still works")

            let terminated = try await server.sql.query(PostgresQuery(unsafeSQL: """
                SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND \(ListenSession.predicate)
                """)).decode(Int64.self).collectAll()
            #expect(terminated.first ?? 0 >= 1)
            try await eventually("the missed sign-out is found when LISTEN comes back", timeout: .seconds(60)) {
                try await server.request(.GET, "/v1/sync/pull", token: tablet.token).status == 401
            }
            #expect(try await server.request(.GET, "/v1/sync/pull", token: phone.token).status == 200)
        }
    }
}

private struct CheckFailed: Error {}

/// The hashes a check was asked for, and how many times it was asked.
private final class AskedHashes: Sendable {
    private let state = Mutex<(calls: Int, hashes: [[UInt8]])>((0, []))
    var calls: Int { state.withLock { $0.calls } }
    var hashes: [[UInt8]] { state.withLock { $0.hashes } }
    func record(_ hashes: [[UInt8]]) { state.withLock { $0 = ($0.calls + 1, $0.hashes + hashes) } }
}
