import Foundation
import Testing
@testable import ShortcutSyncDomain

/// Where as well as when (issue 67): place tokens are checked for their shape only, the sums keep
/// each place's slot exactly and boundedly, and the scorer blends the place into the time's
/// ranking, leaving the ranking by time alone wherever no candidate was ever used.
@Suite struct PlaceSuggestionTests {
    static let phone = UUID(uuidString: "00000000-0000-0000-0000-0000000000a1")!
    static let watch = UUID(uuidString: "00000000-0000-0000-0000-0000000000a2")!
    static let start: Int64 = 1_767_571_200_000  // Monday 2026-01-05 00:00 UTC
    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    static let office = "5c" + String(repeating: "0", count: 30)
    static let officeNextDoor = "5d" + String(repeating: "0", count: 30)
    static let gym = "a7" + String(repeating: "0", count: 30)
    static let beach = "e1" + String(repeating: "0", count: 30)

    @Test func aTokenIsThirtyTwoLowercaseHexDigitsAndItsSlotIsItsFirstByte() {
        #expect(PlaceToken.isValid(Self.office))
        #expect(PlaceToken.slot(of: Self.office) == 0x5c)
        #expect(PlaceToken.slot(of: "ff" + String(repeating: "9", count: 30)) == 0xff)
        #expect(PlaceToken.prefix(ofSlot: 0x5c) == "5c" && PlaceToken.prefix(ofSlot: 0x0a) == "0a")
        for bad in ["", String(repeating: "0", count: 31), String(repeating: "0", count: 33), "5C" + String(repeating: "0", count: 30),
                    "5g" + String(repeating: "0", count: 30), "é" + String(repeating: "0", count: 30)] {
            #expect(!PlaceToken.isValid(bad), "\(bad)")
            #expect(PlaceToken.slot(of: bad) == nil)
        }
    }

    @Test func aDonationWithABadPlaceIsRefusedAtItsPointer() {
        var donation = Donation(bundleId: "com.example.soup", identifier: "order", kind: .intent, intentType: "I", title: "Soup")
        donation.place = Self.office
        let validator = EventValidator(nowMillis: Self.nextNoon)
        func event() -> Event { Event(seq: 1, hlc: HLCTimestamp(wallMillis: Self.nextNoon), body: .donation(donation)) }
        #expect(validator.violations(of: event()).isEmpty)
        donation.place = "not a place"
        #expect(validator.violations(of: event()).map(\.pointer) == ["/place"])
        donation.place = Self.office.uppercased()
        #expect(validator.violations(of: event()).map(\.detail) == ["must be a place token: 32 lowercase hex digits"])
    }

    /// Sums at weekday noons on the phone, at `place` (nil: none), `count` weeks of five days.
    static func noons(at place: String?, weeks: Int = 4, device: UUID = phone) -> ShortcutHabits {
        var habits = ShortcutHabits()
        for week in 0..<weeks {
            for weekday in 0..<5 {
                habits.add(HabitDonation(deviceId: device, wallMillis: start + Int64(week * 7 + weekday) * day + 12 * hour,
                                         utcOffsetMinutes: 0, placeToken: place))
            }
        }
        return habits
    }

    static let soup = ShortcutID(bundleId: "com.example.soup", identifier: "order")
    static let playlist = ShortcutID(bundleId: "com.example.music", identifier: "gym")
    /// The fifth Monday, 12:10.
    static let nextNoon = start + 28 * day + 12 * hour + 600_000

    @Test func thePlaceDecidesBetweenShortcutsOfTheSameHour() throws {
        let candidates = [Self.soup: Self.noons(at: Self.office), Self.playlist: Self.noons(at: Self.gym)]
        let scorer = SuggestionScorer()
        let atOffice = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon, places: [Self.office]), limit: 2)
        let atGym = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon, places: [Self.gym]), limit: 2)
        #expect(atOffice.map(\.shortcut) == [Self.soup, Self.playlist])
        #expect(atGym.map(\.shortcut) == [Self.playlist, Self.soup])
        #expect(atOffice.first?.reason == "often here on weekday afternoons on this device")
        let factor = try #require(atOffice.first?.parts.place)
        #expect(factor > 0.9 && factor < 1, "20 of 20 here, smoothed by one donation towards 0.1")
        // Next door (a neighbouring cell of the request) counts at half.
        let nextDoor = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon,
                                                                    places: [Self.officeNextDoor, Self.office]), limit: 2)
        #expect(nextDoor.map(\.shortcut) == [Self.soup, Self.playlist])
        let half = try #require(nextDoor.first?.parts.place)
        #expect(half > 0.45 && half < 0.55, "about half: \(half)")
    }

    /// A person somewhere new, or a device without the key, is ranked by time alone: the same
    /// shortcuts, the same scores, bit for bit, as with no place at all.
    @Test func somewhereNewIsRankedByTimeAlone() {
        let candidates = [Self.soup: Self.noons(at: Self.office, weeks: 4), Self.playlist: Self.noons(at: Self.gym, weeks: 2)]
        let scorer = SuggestionScorer()
        let timeAlone = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon), limit: 2)
        let atTheBeach = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon, places: [Self.beach]), limit: 2)
        let badTokens = scorer.rank(candidates, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.nextNoon, places: ["nonsense"]), limit: 2)
        #expect(timeAlone.map(\.shortcut) == [Self.soup, Self.playlist])
        #expect(atTheBeach == timeAlone)
        #expect(badTokens == timeAlone)
        #expect(timeAlone.allSatisfy { $0.parts.place == nil })
    }

    /// Places are the person's, not a device's: what the phone learned at the gym ranks the
    /// playlist first on the watch there, and a shortcut no placed donation taught keeps the prior.
    @Test func placesAreLearnedAcrossTheDevices() throws {
        let keyless = ShortcutID(bundleId: "com.example.news", identifier: "read")
        let candidates = [Self.soup: Self.noons(at: Self.office, device: Self.watch), Self.playlist: Self.noons(at: Self.gym),
                          keyless: Self.noons(at: nil, device: Self.watch)]
        let ranked = SuggestionScorer().rank(candidates, at: SuggestionMoment(deviceId: Self.watch, atMillis: Self.nextNoon, places: [Self.gym]), limit: 3)
        #expect(ranked.first?.shortcut == Self.playlist)
        let unplaced = try #require(ranked.first { $0.shortcut == keyless })
        #expect(unplaced.parts.place == SuggestionModel().placePrior)
    }

    @Test func placesRoundTripThroughTheStoredBytesAndSumsWithoutThemKeepTheirOldBytes() throws {
        let placed = Self.noons(at: Self.office)
        let bytes = try #require(placed.bytes)
        #expect(bytes.first == 2)
        #expect(ShortcutHabits(bytes: bytes) == placed)
        // Kept by slot and part of the week: weekday noons are weekday afternoons (part 2).
        #expect(placed.byDevice[Self.phone]?.places.keys.sorted() == [PlaceToken.key(slot: 0x5c, part: 2)])
        #expect(PlaceToken.partOfWeek(hourOfWeek: 12) == 2 && PlaceToken.partOfWeek(hourOfWeek: 5 * 24 + 23) == 4)

        let unplaced = Self.noons(at: nil)
        #expect(unplaced.bytes?.first == 1, "format 1, as before places")
        #expect(ShortcutHabits(bytes: unplaced.bytes ?? []) == unplaced)

        // A place named twice, or more places than there can be, is not such bytes.
        var twice = bytes
        let key = PlaceToken.key(slot: 0x5c, part: 2)
        let oneSlot = placed.byDevice[Self.phone]!.places[key]!
        let slotBytes = [UInt8(key & 0xFF), UInt8(key >> 8), UInt8(oneSlot.limbs.count)]
            + oneSlot.limbs.flatMap { limb in withUnsafeBytes(of: limb.littleEndian) { Array($0) } }
        #expect(Array(twice.suffix(slotBytes.count + 2)) == [1, 0] + slotBytes, "one slot, little-endian count, at the end")
        twice.replaceSubrange((twice.count - slotBytes.count - 2)..., with: [2, 0] + slotBytes + slotBytes)
        #expect(ShortcutHabits(bytes: twice) == nil)
        var tooMany = bytes
        tooMany.replaceSubrange((tooMany.count - slotBytes.count - 2)..<(tooMany.count - slotBytes.count), with: [1, 8])
        #expect(ShortcutHabits(bytes: tooMany) == nil, "2,049 places")
    }

    /// However many places a person goes to, a device's sums of one shortcut hold at most 256
    /// slots in 8 parts of the week.
    @Test func aShortcutsPlacesAreBounded() throws {
        var habits = ShortcutHabits()
        for index in 0..<2_000 {
            let token = String(format: "%02x", index % 256) + String(format: "%030x", index)
            habits.add(HabitDonation(deviceId: Self.phone, wallMillis: Self.start + Int64(index) * 60_000, utcOffsetMinutes: 0, placeToken: token))
        }
        let places = try #require(habits.byDevice[Self.phone]?.places)
        #expect(Set(places.keys.map(PlaceToken.slot(ofKey:))).count == 256 && places.count <= 256 * PlaceToken.partsOfWeek)
        #expect(ShortcutHabits(bytes: habits.bytes ?? []) == habits)
        let learned = LearnedHabits(habits, atMillis: Self.start + 2_000 * 60_000)
        #expect(learned.places.count == 256 && learned.places.allSatisfy { $0.prefix.count == 2 })
    }
}
