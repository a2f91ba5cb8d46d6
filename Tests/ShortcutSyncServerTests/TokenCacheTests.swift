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
