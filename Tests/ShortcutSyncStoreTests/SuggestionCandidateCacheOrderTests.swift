import Foundation
@testable import ShortcutSyncStore
import ShortcutSyncDomain
import Testing

/// The cache's order of asking (`SuggestionCandidateCache`), without a database: the least
/// recently asked for goes first however often the others were asked for, and what the order
/// holds stays bounded by what is kept.
@Suite struct SuggestionCandidateCacheOrderTests {
    /// One shortcut on one device at one hour: weight 3.
    static let candidates: [ShortcutID: ShortcutHabits] = {
        var habits = ShortcutHabits()
        habits.add(HabitDonation(deviceId: UUID(), wallMillis: 1_770_000_000_000, utcOffsetMinutes: 0))
        return [ShortcutID(bundleId: "com.example.life", identifier: "tea"): habits]
    }()

    static func key(_ device: Int) -> SuggestionCandidateCache.Key {
        .init(account: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)),
              device: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(device))), candidates: 64, reach: 512)
    }

    @Test func theLeastRecentlyAskedForGoesFirstAndTheOrderStaysBounded() {
        let weight = SuggestionCandidateCache.weight(of: Self.candidates)
        #expect(weight == 3)
        let cache = SuggestionCandidateCache(capacity: 8 * weight)
        for device in 0..<8 { cache.keep(Self.candidates, for: Self.key(device), at: "m") }
        #expect(cache.size == (entries: 8, weight: 8 * weight))
        // Every one but device 3 asked for again, many times over, and device 5 read again.
        for round in 0..<10_000 {
            let device = round % 8
            if device != 3 { cache.took(Self.key(device)) }
        }
        cache.keep(Self.candidates, for: Self.key(5), at: "m2")
        #expect(cache.placesInOrder <= 2 * 8 + 64, "the places passed by are dropped: \(cache.placesInOrder)")
        #expect(cache.size == (entries: 8, weight: 8 * weight), "kept again in its own place")

        // Two new devices: device 3 goes first, then the least recently asked for of the rest.
        cache.keep(Self.candidates, for: Self.key(8), at: "m")
        #expect(cache.entry(for: Self.key(3)) == nil)
        #expect(cache.entry(for: Self.key(5))?.mark == "m2")
        cache.keep(Self.candidates, for: Self.key(9), at: "m")
        // The last round of asks ended with device 7 (9,999 % 8), device 6 before it, ..., 0
        // before 1; device 5 was kept after them all: device 0 is now the oldest.
        #expect(cache.entry(for: Self.key(0)) == nil)
        #expect(cache.size == (entries: 8, weight: 8 * weight))
        for device in [1, 2, 4, 5, 6, 7, 8, 9] { #expect(cache.entry(for: Self.key(device)) != nil, "device \(device)") }
    }
}
