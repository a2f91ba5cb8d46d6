import Foundation
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// The scoring on worked examples: a routine is suggested at its hour and not at others, a
/// deletion forgets, donations not eligible for prediction teach nothing, a new device starts
/// from the others' habits.
@Suite struct SuggestionScoringTests {
    static let start: Int64 = 1_767_571_200_000  // Monday 2026-01-05 00:00 UTC
    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    static let week = 7 * day
    static let phone = UUID(uuidString: "00000000-0000-0000-0000-0000000000a1")!
    static let iPad = UUID(uuidString: "00000000-0000-0000-0000-0000000000a2")!

    /// Six weeks of a person's phone: "atm" every Friday between 18:00 and 19:00, "coffee" every
    /// weekday at 8, "run" on Sundays at 18, "news" every evening at 21, "mail" at random hours.
    static func planted() -> [ShortcutID: ShortcutHabits] {
        var rng = SeededGenerator(seed: 21)
        var habits: [ShortcutID: ShortcutHabits] = [:]
        func donate(_ identifier: String, at wall: Int64) {
            habits[ShortcutID(bundleId: identifier == "atm" ? "com.example.bank" : "com.example.life", identifier: identifier), default: ShortcutHabits()]
                .add(HabitDonation(deviceId: phone, wallMillis: wall + Int64.random(in: 0..<hour, using: &rng), utcOffsetMinutes: 0))
        }
        for week in 0..<6 {
            let monday = start + Int64(week) * Self.week
            donate("atm", at: monday + 4 * day + 18 * hour)
            for weekday in 0..<5 { donate("coffee", at: monday + Int64(weekday) * day + 8 * hour) }
            donate("run", at: monday + 6 * day + 18 * hour)
            for weekday in 0..<7 { donate("news", at: monday + Int64(weekday) * day + 21 * hour) }
            for _ in 0..<3 { donate("mail", at: monday + Int64.random(in: 0..<(7 * day), using: &rng)) }
        }
        return habits
    }

    @Test func aPlantedRoutineRanksFirstAtItsHourAndNotAtOthers() {
        let habits = Self.planted()
        let scorer = SuggestionScorer()
        let nextFriday = Self.start + 6 * Self.week + 4 * Self.day + 18 * Self.hour + 20 * 60_000
        let atItsHour = scorer.rank(habits, at: SuggestionMoment(deviceId: Self.phone, atMillis: nextFriday, deviceLabel: "iPhone"), limit: 4)
        #expect(atItsHour.first?.shortcut.identifier == "atm")
        #expect(atItsHour.first?.reason == "often on Friday evenings on this iPhone")
        // Tuesday 09:20, Friday 10:20, Sunday 18:20: other routines' hours.
        for other in [nextFriday - 3 * Self.day - 9 * Self.hour, nextFriday - 8 * Self.hour, nextFriday + 2 * Self.day] {
            let ranked = scorer.rank(habits, at: SuggestionMoment(deviceId: Self.phone, atMillis: other), limit: 4)
            #expect(ranked.first?.shortcut.identifier != "atm", "at \(other)")
        }
        // On a device that never did it, the person's habit from their other device still shows.
        let onTheIPad = scorer.rank(habits, at: SuggestionMoment(deviceId: Self.iPad, atMillis: nextFriday, deviceLabel: "iPad"), limit: 4)
        #expect(onTheIPad.first?.shortcut.identifier == "atm")
        #expect(onTheIPad.first?.reason == "often at this time on your other devices")
    }

    @Test func localTimeIsWhatCountsAcrossTimeZones() {
        // A routine at 08:00 local time in Tokyo (UTC+9) is 23:00 UTC the day before.
        var habits: [ShortcutID: ShortcutHabits] = [:]
        for week in 0..<4 {
            let tuesday8Tokyo = Self.start + Int64(week) * Self.week + 1 * Self.day + 8 * Self.hour - 9 * Self.hour
            habits[ShortcutID(bundleId: "com.example.rail", identifier: "train"), default: ShortcutHabits()]
                .add(HabitDonation(deviceId: Self.phone, wallMillis: tuesday8Tokyo, utcOffsetMinutes: 540))
            habits[ShortcutID(bundleId: "com.example.life", identifier: "tea"), default: ShortcutHabits()]
                .add(HabitDonation(deviceId: Self.phone, wallMillis: tuesday8Tokyo + 12 * Self.hour, utcOffsetMinutes: 540))
        }
        let next = Self.start + 4 * Self.week + 1 * Self.day - 1 * Self.hour + 15 * 60_000
        let inTokyo = SuggestionScorer().rank(habits, at: SuggestionMoment(deviceId: Self.phone, atMillis: next, utcOffsetMinutes: 540), limit: 1)
        #expect(inTokyo.first?.shortcut.identifier == "train")
    }

    @Test func aDeletionForgetsExactlyWhatItsDonationsTaught() throws {
        var phone = DeviceScript(Self.phone)
        let friday = Self.start + 4 * Self.day + 18 * Self.hour
        var events = (0..<4).map { phone.donate("atm", bundle: "com.example.bank", at: friday + Int64($0) * Self.week) }
        events.append(phone.donate("coffee", bundle: "com.example.life", at: friday + 1_000))
        var store = FoldRowStore()
        try store.fold(events.enumerated().map { FoldEvent($1, version: Int64($0 + 1)) })
        let before = SuggestionPropertyTests.candidates(store.rows)
        #expect(before.keys.map(\.identifier).sorted() == ["atm", "coffee"])
        try store.fold([FoldEvent(phone.delete(.all, bundle: "com.example.bank", at: friday + 5 * Self.week), version: 6)])
        let after = SuggestionPropertyTests.candidates(store.rows)
        #expect(after.keys.map(\.identifier) == ["coffee"])
        #expect(after[ShortcutID(bundleId: "com.example.life", identifier: "coffee")] == before[ShortcutID(bundleId: "com.example.life", identifier: "coffee")])
        let ranked = SuggestionScorer().rank(after, at: SuggestionMoment(deviceId: Self.phone, atMillis: friday + 6 * Self.week), limit: 20)
        #expect(!ranked.contains { $0.shortcut.identifier == "atm" })
    }

    @Test func aDonationNotEligibleForPredictionTeachesNothing() throws {
        var phone = DeviceScript(Self.phone)
        let hidden = phone.event(at: Self.start, .donation(Donation(
            bundleId: "com.example.bank", identifier: "balance", kind: .intent, intentType: "I", title: "Balance", eligibleForPrediction: false)))
        var store = FoldRowStore()
        try store.fold([FoldEvent(hidden, version: 1)])
        let row = try #require(store.rows.groups.values.first)
        #expect(row.count == 1)  // the shortcut exists and syncs ...
        #expect(row.habits.isEmpty)  // ... and teaches the suggestions nothing
        #expect(SuggestionScorer().rank(SuggestionPropertyTests.candidates(store.rows), at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.start), limit: 4).isEmpty)
    }

    @Test func anAnswerHoldsAtMostItsLimitBestFirst() {
        let habits = Self.planted()
        let ranked = SuggestionScorer().rank(habits, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.start + 6 * Self.week), limit: 3)
        #expect(ranked.count == 3)
        #expect(ranked.map(\.score) == ranked.map(\.score).sorted(by: >))
        #expect(ranked.allSatisfy { !$0.reason.isEmpty && abs($0.score - $0.parts.score) < 1e-12 })
        #expect(SuggestionScorer().rank(habits, at: SuggestionMoment(deviceId: Self.phone, atMillis: Self.start), limit: 0).isEmpty)
    }

    /// Equal sums score equal bit for bit, however their hours are laid out in memory. A
    /// dictionary's iteration order follows its capacity and history, and floating-point sums
    /// follow their order: one large hour among twenty small ones near the hour asked about
    /// loses the small ones added after it, and keeps them added before it.
    @Test func equalSumsScoreEqualBitForBitWhateverTheirHoursHistory() {
        let wednesdayTen = 2 * 24 + 10
        // The hours the parts look at for Wednesday 10:00: around it, and around 10:00 on the
        // other weekdays. One holds 2^60 (its ulp is 256), the others 100 each.
        let near = [0, 1, 3, 4].flatMap { day in (8...12).map { day * 24 + $0 } } + (8...12).map { 2 * 24 + $0 }
        var hours: [Int: WeightSum] = [:]
        for (index, hour) in near.enumerated() { hours[hour] = index == 0 ? WeightSum(1, shiftedLeftBy: 60) : WeightSum(100, shiftedLeftBy: 0) }
        var total = WeightSum()
        for sum in hours.values { total.add(sum) }
        let compact = HabitSums(count: near.count, total: total, hours: hours)
        let scorer = SuggestionScorer()
        for spread in [40, 80, 160] {
            // The same sums, in a dictionary grown through `spread` far hours taken back again.
            let far = (0..<HabitClock.hoursPerWeek).filter { hour in !near.contains(hour) }.prefix(spread)
            let padding = HabitSums(count: far.count, total: WeightSum(UInt64(far.count), shiftedLeftBy: 0),
                                    hours: Dictionary(uniqueKeysWithValues: far.map { ($0, WeightSum(1, shiftedLeftBy: 0)) }))
            var grown = HabitSums()
            grown.add(padding)
            grown.add(compact)
            grown.add(padding, subtracting: true)
            #expect(grown == compact)
            let one = scorer.parts(of: compact, hour: wednesdayTen, scale: (exponent: 0, divisor: 1))
            let other = scorer.parts(of: grown, hour: wednesdayTen, scale: (exponent: 0, divisor: 1))
            #expect(one.thisHour.bitPattern == other.thisHour.bitPattern)
            #expect(one.sameHourOtherDays.bitPattern == other.sameHourOtherDays.bitPattern)
        }
    }
}
