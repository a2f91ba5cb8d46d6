import Foundation
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Testing

/// The candidates of a device's last suggestions request, kept until its account's rows change
/// (`SuggestionCandidateCache`): a device that asks again reads the head's mark and nothing
/// more, and anything that writes the account's rows, a push or a rebuild's promotion that
/// keeps the version, makes the next request read them again.
@Suite struct SuggestionCacheTests {
    @Test func aDeviceAskingAgainTakesKeptSumsUntilItsAccountsRowsChange() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let iPad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            try await SuggestionsTests.plant(on: phone)
            let logger = TestDatabase.shared.logger
            let plain = ProjectionStore(client: server.sql, logger: logger)
            var store = plain
            let cache = SuggestionCandidateCache()
            store.suggestionCache = cache

            let first = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 0, read: 1))
            #expect(first.candidates.keys.map(\.identifier).sorted() == ["atm", "coffee", "news"])
            let again = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 1, read: 1), "the same device at the same head: kept")
            #expect(again.candidates == first.candidates && again.version == first.version && again.platform == first.platform)
            #expect(again.latestUTCOffsetMinutes == first.latestUTCOffsetMinutes && again.fromKeptSums && !first.fromKeptSums)
            let unkept = try await plain.suggestionInputs(account: account.id, device: phone.id)
            #expect(unkept.candidates == again.candidates, "what a request without the cache reads")
            _ = try await store.suggestionInputs(account: account.id, device: iPad.id)
            #expect(cache.uses == (kept: 1, read: 2), "another device of the account: its own")
            #expect(cache.size.entries == 2)

            // A push writes the head: the next request reads, and sees the push.
            phone.record(SuggestionsTests.donation("tea", bundle: "com.example.life"), at: SuggestionsTests.nextFriday)
            try await phone.push()
            let pushed = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 1, read: 3))
            #expect(pushed.version > first.version)
            #expect(pushed.candidates.keys.contains { $0.identifier == "tea" })
            #expect(pushed.candidates == (try await plain.suggestionInputs(account: account.id, device: phone.id)).candidates)

            // A rebuild leaves the live rows as they were; its promotion keeps the version and
            // writes the head: read again.
            let rebuilder = ProjectionRebuilder(client: server.sql, logger: logger)
            try await rebuilder.rebuild()
            _ = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 2, read: 3), "rebuilt, not promoted: the live rows are the same")
            try await rebuilder.promote()
            let rebuilt = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 2, read: 4), "after the promotion")
            #expect(rebuilt.version == pushed.version && rebuilt.candidates == pushed.candidates)
            _ = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(cache.uses == (kept: 3, read: 4))
        }
    }

    /// What the cache keeps is bounded by weight: the least recently asked for goes first, and a
    /// request heavier than a quarter of it is not kept.
    @Test func theLeastRecentlyAskedForGoesFirstAndAHeavyRequestIsNotKept() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let devices = [phone] + [
                try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS),
                try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS),
                try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS),
            ]
            phone.record(SuggestionsTests.donation("tea", bundle: "com.example.life"), at: SuggestionsTests.start)
            try await phone.push()
            var store = ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger)
            let one = try await store.suggestionInputs(account: account.id, device: phone.id)
            let weight = SuggestionCandidateCache.weight(of: one.candidates)
            #expect(weight == 3, "a shortcut, its device and its hour")
            // Room for four devices' requests of this weight (each a quarter), not five.
            let cache = SuggestionCandidateCache(capacity: 4 * weight)
            store.suggestionCache = cache
            for device in devices { _ = try await store.suggestionInputs(account: account.id, device: device.id) }
            #expect(cache.size == (entries: 4, weight: 4 * weight))
            _ = try await store.suggestionInputs(account: account.id, device: phone.id)  // the phone's, asked for again
            let fifth = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            _ = try await store.suggestionInputs(account: account.id, device: fifth.id)
            #expect(cache.size == (entries: 4, weight: 4 * weight), "one went to make room")
            let before = cache.uses
            for device in [phone, devices[2], devices[3], fifth] { _ = try await store.suggestionInputs(account: account.id, device: device.id) }
            #expect(cache.uses.kept == before.kept + 4, "the phone's, the Mac's, the watch's and the new iPhone's are kept")
            _ = try await store.suggestionInputs(account: account.id, device: devices[1].id)
            #expect(cache.uses.read == before.read + 1, "the iPad's, the least recently asked for, went")

            let small = SuggestionCandidateCache(capacity: 4 * weight - 1)
            store.suggestionCache = small
            _ = try await store.suggestionInputs(account: account.id, device: phone.id)
            _ = try await store.suggestionInputs(account: account.id, device: phone.id)
            #expect(small.uses == (kept: 0, read: 2) && small.size.entries == 0, "heavier than a quarter: never kept")
        }
    }
}
