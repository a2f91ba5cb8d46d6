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

    /// Issue 56: a sign-out (one a second, from any account, on every server) used to stop every
    /// lookup under way from being kept, so that a churn of sign-outs made every request of every
    /// device ask the database. A lookup of another device's token, or another account's, is
    /// kept; the signed-out device's and its account's erasure are not.
    @Test func forgettingOneDeviceKeepsLookupsOfOthersUnderWay() {
        let cache = TokenCache()
        let began = cache.generation
        cache.forget(device: phone)
        cache.remember(.device(device: tablet, account: account), tokenHash: tabletHash, lookedUpAt: began)
        cache.remember(.account(other), tokenHash: otherHash, lookedUpAt: began)
        cache.remember(.device(device: phone, account: account), tokenHash: phoneHash, lookedUpAt: began)
        #expect(cache.caller(tokenHash: tabletHash) == .device(device: tablet, account: account), "another device's lookup is kept")
        #expect(cache.caller(tokenHash: otherHash) == .account(other))
        #expect(cache.caller(tokenHash: phoneHash) == nil, "the signed-out device's is not")

        let beforeErasure = cache.generation
        cache.forget(account: account)
        cache.remember(.account(account), tokenHash: accountHash, lookedUpAt: beforeErasure)
        cache.remember(.device(device: tablet, account: account), tokenHash: tabletHash, lookedUpAt: beforeErasure)
        cache.remember(.account(other), tokenHash: otherHash, lookedUpAt: beforeErasure)
        #expect(cache.caller(tokenHash: accountHash) == nil && cache.caller(tokenHash: tabletHash) == nil, "nothing of the erased account")
        #expect(cache.caller(tokenHash: otherHash) == .account(other))
    }

    /// Forgetting one device takes its entries alone: the others stay, by hash, with their own
    /// lifetime; a device looked up again after its forgetting is kept again.
    @Test func forgettingOneDeviceKeepsEveryOtherEntry() {
        let cache = TokenCache()
        let start = ContinuousClock.now
        let devices = (0..<1_000).map { _ in UUID() }
        for (index, device) in devices.enumerated() {
            cache.remember(.device(device: device, account: account), tokenHash: Self.hash(index), lookedUpAt: cache.generation, now: start)
        }
        for device in devices.prefix(500) { cache.forget(device: device) }
        #expect(cache.count == 500)
        #expect((0..<500).allSatisfy { cache.caller(tokenHash: Self.hash($0), now: start) == nil })
        #expect((500..<1_000).allSatisfy { cache.caller(tokenHash: Self.hash($0), now: start) == .device(device: devices[$0], account: account) })
        cache.remember(.device(device: devices[0], account: account), tokenHash: Self.hash(0), lookedUpAt: cache.generation, now: start)
        #expect(cache.caller(tokenHash: Self.hash(0), now: start) != nil, "looked up after its forgetting, it is kept")
        cache.forget(account: account)
        #expect(cache.count == 0)
    }

    /// The forgettings a lookup is checked against are bounded: one that began before more of them
    /// than are kept is not kept (it is looked up again next time), nor is one that began before
    /// everything was forgotten.
    @Test func aLookupOlderThanTheForgettingsKeptIsNotKept() {
        let cache = TokenCache(forgetsKept: 8)
        let began = cache.generation
        for _ in 0..<9 { cache.forget(device: UUID()) }
        cache.remember(.device(device: tablet, account: account), tokenHash: tabletHash, lookedUpAt: began)
        #expect(cache.caller(tokenHash: tabletHash) == nil)
        let recent = cache.generation
        for _ in 0..<100 { cache.forget(device: UUID()) }
        let late = cache.generation - 4
        cache.remember(.device(device: tablet, account: account), tokenHash: tabletHash, lookedUpAt: late)
        #expect(cache.caller(tokenHash: tabletHash) != nil, "within the forgettings kept")
        cache.forgetAll()
        cache.remember(.account(other), tokenHash: otherHash, lookedUpAt: recent)
        #expect(cache.caller(tokenHash: otherHash) == nil, "everything was forgotten since it began")
    }

    private static func hash(_ index: Int) -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: 32)
        withUnsafeBytes(of: index) { hash.replaceSubrange(0..<$0.count, with: $0) }
        return hash
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
