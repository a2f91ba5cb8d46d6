import Foundation
@testable import ShortcutSyncServer
import Testing

/// `TokenCache` alone: what it keeps, for how long, and what makes it forget.
@Suite struct TokenCacheTests {
    let phone = UUID(), tablet = UUID(), account = UUID(), other = UUID()
    let phoneHash = [UInt8](repeating: 1, count: 32), tabletHash = [UInt8](repeating: 2, count: 32)
    let accountHash = [UInt8](repeating: 3, count: 32), otherHash = [UInt8](repeating: 4, count: 32)

    @Test func aKeptTokenIsLookedUpAgainAfterItsLifetime() {
        let cache = TokenCache(lifetime: .seconds(30))
        let start = ContinuousClock.now
        cache.remember(.device(device: phone, account: account), tokenHash: phoneHash, lookedUpAt: cache.generation, now: start)
        #expect(cache.caller(tokenHash: phoneHash, now: start + .seconds(29)) == .device(device: phone, account: account))
        #expect(cache.caller(tokenHash: phoneHash, now: start + .seconds(30)) == nil)
        #expect(cache.caller(tokenHash: tabletHash, now: start) == nil)
    }

    @Test func signingOutOrErasingForgetsExactlyTheirTokens() {
        let cache = TokenCache()
        cache.remember(.device(device: phone, account: account), tokenHash: phoneHash, lookedUpAt: cache.generation)
        cache.remember(.device(device: tablet, account: account), tokenHash: tabletHash, lookedUpAt: cache.generation)
        cache.remember(.account(account), tokenHash: accountHash, lookedUpAt: cache.generation)
        cache.remember(.account(other), tokenHash: otherHash, lookedUpAt: cache.generation)
        cache.forget(device: phone)
        #expect(cache.caller(tokenHash: phoneHash) == nil)
        #expect(cache.caller(tokenHash: tabletHash) != nil)
        cache.forget(account: account)
        #expect(cache.caller(tokenHash: tabletHash) == nil && cache.caller(tokenHash: accountHash) == nil)
        #expect(cache.caller(tokenHash: otherHash) == .account(other))
        cache.forgetAll()
        #expect(cache.count == 0)
    }

    /// A lookup the database answered before a sign-out, kept after it, would let the token work
    /// for a lifetime more: a lookup that began before any forgetting is not kept.
    @Test func aLookupThatRacedASignOutIsNotKept() {
        let cache = TokenCache()
        let began = cache.generation
        cache.forget(device: phone)
        cache.remember(.device(device: phone, account: account), tokenHash: phoneHash, lookedUpAt: began)
        #expect(cache.caller(tokenHash: phoneHash) == nil)
    }

    @Test func itNeverHoldsMoreThanItsCapacity() {
        let cache = TokenCache(capacity: 100)
        for index in 0..<1_000 {
            var hash = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: index) { hash.replaceSubrange(0..<$0.count, with: $0) }
            cache.remember(.account(UUID()), tokenHash: hash, lookedUpAt: cache.generation)
            #expect(cache.count <= 100)
        }
    }
}

/// What a stranger without a token can make the service spend: a token of the wrong shape is
/// never looked up, an unknown one is not looked up again for a while, lookups under way are
/// bounded, and readiness asks the database at most once a second.
@Suite struct StrangerCostTests {
    @Test func onlyATokenOfTheExactShapeIsLookedUp() {
        let made = Tokens.make(.device)
        #expect(Tokens.hasShape(made, of: .device))
        #expect(!Tokens.hasShape(made, of: .account))
        for forged in ["ssd_", "ssd_forged", made + "A", String(made.dropLast()), String(made.dropLast()) + "=", String(made.dropLast()) + "é",
                       "ssd_" + String(repeating: "A", count: 1000)] {
            #expect(!Tokens.hasShape(forged, of: .device), "\(forged.prefix(60))")
        }
    }

    @Test func anUnknownTokenIsRememberedForALifetimeAndTheMemoryIsBounded() {
        let cache = TokenCache(lifetime: .seconds(30), capacity: 3)
        let start = ContinuousClock.now
        let hashes = (0..<5).map { [UInt8](repeating: UInt8($0), count: 32) }
        cache.rememberUnknown(tokenHash: hashes[0], now: start)
        #expect(cache.isKnownUnknown(tokenHash: hashes[0], now: start + .seconds(29)))
        #expect(!cache.isKnownUnknown(tokenHash: hashes[0], now: start + .seconds(30)))
        for hash in hashes { cache.rememberUnknown(tokenHash: hash, now: start) }
        #expect(hashes.filter { cache.isKnownUnknown(tokenHash: $0, now: start) }.count <= 3)
        #expect(cache.isKnownUnknown(tokenHash: hashes[4], now: start))
    }

    @Test func lookupsUnderWayAreBoundedAndAWaitForAPlaceIsBounded() async {
        let cache = TokenCache()
        for _ in 0..<TokenCache.maximumLookups { #expect(cache.beginLookup()) }
        #expect(!cache.beginLookup())
        #expect(await cache.waitForLookup() == false, "no place came free within the wait")
        cache.endLookup()
        #expect(cache.beginLookup())
        // One that waits gets the place given back meanwhile.
        async let waited = cache.waitForLookup()
        try? await Task.sleep(for: .milliseconds(50))
        cache.endLookup()
        #expect(await waited)
    }

    @Test func aRecentValueIsWorkedOutOncePerIntervalAndAFailureIsNotKept() async throws {
        let recent = RecentValue<Int>(interval: .seconds(60))
        let works = Counter()
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await recent.value { await works.add(); try await Task.sleep(for: .milliseconds(50)); return 7 } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values == Array(repeating: 7, count: 20))
        #expect(await works.value == 1, "twenty callers, one work")
        #expect(try await recent.value { await works.add(); return 8 } == 7, "within the interval, the last value")
        #expect(await works.value == 1)

        let failing = RecentValue<Int>(interval: .seconds(60))
        await #expect(throws: CancellationError.self) { try await failing.value { throw CancellationError() } }
        #expect(try await failing.value { 9 } == 9, "a failure is not kept")
    }

    private actor Counter {
        var value = 0
        func add() { value += 1 }
    }
}
