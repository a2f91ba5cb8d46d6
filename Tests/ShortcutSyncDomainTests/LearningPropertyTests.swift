import Foundation
import PropertyBased
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

private let start = SuggestionPropertyTests.start
private let hour: Int64 = 3_600_000

/// Forgetting and pausing what the suggestions learn (DESIGN §3): learning events are folded by
/// merge rules like every other event, so the sums depend on the set of events only, a rebuild
/// keeps what was forgotten forgotten, and views never change because of them.
@Suite struct LearningPropertyTests {
    typealias Suggestions = SuggestionPropertyTests
    static let devices = Suggestions.devices

    /// A random history like `SuggestionPropertyTests.history`'s, with forgets of the account, of
    /// a device, of a shortcut and of a place (the slot two of its places share, the other's, or
    /// one where nothing was done), and pauses and resumes of the account and of a device, at
    /// random clocks: many land among donations already made.
    static func history(from choices: [Int]) -> [AcceptedEvent] {
        let plain = Suggestions.history(from: choices)
        return plain.enumerated().map { index, event in
            var rng = SeededGenerator(seed: UInt64(choices[index]) &* 31 &+ 7)
            let device = devices.randomElement(using: &rng)!
            let body: EventBody
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: body = .learningForgotten(LearningForgotten(scope: .account))
            case 1: body = .learningForgotten(LearningForgotten(scope: .device(device)))
            case 2:
                body = .learningForgotten(LearningForgotten(scope: .shortcut(ShortcutID(
                    bundleId: Suggestions.bundles.randomElement(using: &rng)!, identifier: Suggestions.identifiers.randomElement(using: &rng)!))))
            case 3: body = .learningPaused(LearningPaused(scope: .account, paused: Bool.random(using: &rng)))
            case 6: body = .learningForgotten(LearningForgotten(scope: .place([0x0a, 0xf3, 0x55].randomElement(using: &rng)!)))
            case 4, 5: body = .learningPaused(LearningPaused(scope: .device(device), paused: Bool.random(using: &rng)))
            default: return event
            }
            return AcceptedEvent(deviceId: event.deviceId, event: Event(id: event.event.id, seq: event.event.seq, hlc: event.event.hlc, body: body))
        }
    }

    /// The sums straight from the rules as DESIGN §3 words them, event by event, written apart
    /// from `LearningRules`: an eligible donation no deletion covers teaches unless its device
    /// was signed out, a newer forget covers it, or at its key its account's or its device's
    /// latest pause or resume before it paused.
    static func reference(_ events: [AcceptedEvent]) -> [ShortcutID: ShortcutHabits] {
        func paused(_ scope: LearningScope, at key: EventKey) -> Bool {
            let latest = events.filter { other in
                guard case .learningPaused(let pause) = other.event.body else { return false }
                return pause.scope == scope && other.key < key
            }.max { $0.key < $1.key }
            guard case .learningPaused(let pause)? = latest?.event.body else { return false }
            return pause.paused
        }
        var sums: [ShortcutID: ShortcutHabits] = [:]
        for event in events {
            guard case .donation(let donation) = event.event.body, donation.eligibleForPrediction,
                  !Suggestions.isCovered(donation, key: event.key, in: events) else { continue }
            let shortcut = ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier)
            let forgotten = events.contains { other in
                switch other.event.body {
                case .signedOut: return other.deviceId == event.deviceId
                case .learningForgotten(let forget):
                    let inScope = switch forget.scope {
                    case .account: true
                    case .device(let device): device == event.deviceId
                    case .shortcut(let id): id == shortcut
                    case .place: false  // where is forgotten, not when (below)
                    }
                    return inScope && event.key < other.key
                default: return false
                }
            }
            guard !forgotten, !paused(.account, at: event.key), !paused(.device(event.deviceId), at: event.key) else { continue }
            let slot = donation.place.map { UInt8($0.prefix(2), radix: 16)! }
            let placeForgotten = events.contains { other in
                guard case .learningForgotten(let forget) = other.event.body, case .place(let forgottenSlot) = forget.scope else { return false }
                return forgottenSlot == slot && event.key < other.key
            }
            sums[shortcut, default: ShortcutHabits()].add(HabitDonation(
                deviceId: event.deviceId, wallMillis: event.event.hlc.wallMillis, utcOffsetMinutes: donation.utcOffsetMinutes ?? 0,
                placeToken: placeForgotten ? nil : donation.place))
        }
        return sums.filter { !$0.value.isEmpty }
    }

    @Test func learningEventsGiveTheSameSumsInWhateverOrderAndBatchesTheyArrive() async {
        await propertyCheck(count: 500, input: Suggestions.choices, Suggestions.seeds) { choices, seed in
            let (events, _) = Suggestions.signingOut(Self.history(from: choices), choice: seed)
            let expected = Self.reference(events)
            let inOrder = Suggestions.candidates(try! Suggestions.fold(events, seed: seed).rows)
            let arrived = Suggestions.candidates(try! Suggestions.fold(Suggestions.arrivals(events, seed: seed &+ 1), seed: seed &+ 2).rows)
            #expect(inOrder == expected)
            #expect(arrived == expected)
            // The whole-set fold agrees, whatever the order it is given the events in.
            var rng = SeededGenerator(seed: UInt64(seed))
            #expect(AccountState(folding: events.shuffled(using: &rng)).allHabits == expected)
        }
    }

    /// Learning events change the sums alone: the same history without them gives the same view.
    @Test func learningEventsNeverChangeTheView() async {
        await propertyCheck(count: 100, input: Suggestions.choices, Suggestions.seeds) { choices, seed in
            let events = Self.history(from: choices)
            let withoutLearning = events.filter {
                switch $0.event.body {
                case .learningForgotten, .learningPaused: false
                default: true
                }
            }
            let folded = try! Suggestions.fold(events, seed: seed)
            let plain = try! Suggestions.fold(withoutLearning, seed: seed)
            #expect(folded.shortcuts.mapValues(\.donationCount) == plain.shortcuts.mapValues(\.donationCount))
            #expect(folded.shortcuts.mapValues(\.latest) == plain.shortcuts.mapValues(\.latest))
            #expect(AccountState(folding: events).accountView == AccountState(folding: withoutLearning).accountView)
        }
    }

    /// Histories where learning events land among donations already folded, so that batches
    /// have groups' sums counted again from the log (the property above would pass without
    /// that path only if it were never taken).
    @Test func learningEventsLandingAmongEarlierDonationsAreCountedAgainFromTheLog() throws {
        var resums = 0
        for seed in 0..<40 {
            var rng = SeededGenerator(seed: UInt64(seed))
            let choices = (0..<60).map { _ in Int.random(in: 0...Int(Int32.max), using: &rng) }
            let events = Self.history(from: choices)
            let store = try Suggestions.fold(events, seed: seed)
            #expect(Suggestions.candidates(store.rows) == Self.reference(events))
            resums += store.resums
        }
        #expect(resums > 0)
    }

    @Test func storedRulesReadBackEqual() async {
        await propertyCheck(count: 200, input: Suggestions.choices, Suggestions.seeds) { choices, seed in
            let (events, _) = Suggestions.signingOut(Self.history(from: choices), choice: seed)
            let rules = AccountState(folding: events).learning.ofAccountAndDevices
            #expect(LearningRules(bytes: rules.bytes ?? []) == (rules.isEmpty ? nil : rules))
            var rng = SeededGenerator(seed: UInt64(seed))
            let reordered = AccountState(folding: events.shuffled(using: &rng)).learning.ofAccountAndDevices
            #expect(reordered.bytes == rules.bytes, "equal rules are equal bytes, for verify")
        }
    }

    // MARK: Worked examples

    static let coffee = ShortcutID(bundleId: "com.example.soup", identifier: "coffee")

    static func fold(_ events: [AcceptedEvent], batches: [Int]) throws -> FoldRowStore {
        var store = FoldRowStore()
        var done = 0
        for size in batches + [events.count] where done < events.count {
            let batch = events[done..<min(events.count, done + size)].enumerated().map { FoldEvent($1, version: Int64(done + $0 + 1)) }
            try store.fold(batch)
            done += batch.count
        }
        return store
    }

    @Test func aSuggestionAskedRightAfterAForgetKnowsNothingOfWhatItCovered() throws {
        var phone = DeviceScript(), mac = DeviceScript(account: phone.account)
        let mornings = (0..<14).map { day in phone.donate("coffee", at: start + day * 24 * hour + 8 * hour) }
        let macs = (0..<14).map { day in mac.donate("tea", at: start + day * 24 * hour + 16 * hour) }
        let later = start + 15 * 24 * hour
        let moment = SuggestionMoment(deviceId: mac.deviceId, atMillis: later + 8 * hour, utcOffsetMinutes: 0)
        let scorer = SuggestionScorer()
        let before = try Self.fold(mornings + macs, batches: [10])
        #expect(!scorer.rank(Suggestions.candidates(before.rows), at: moment, limit: 4).isEmpty)

        // The account: nothing is left to suggest from, and the view is the same.
        var account = before
        try account.fold([FoldEvent(mac.forget(.account, at: later), version: 29)])
        #expect(Suggestions.candidates(account.rows).isEmpty)
        #expect(scorer.rank(Suggestions.candidates(account.rows), at: moment, limit: 4).isEmpty)
        #expect(account.shortcuts == before.shortcuts)

        // The phone: the Mac's tea stays, the phone's coffee goes.
        var device = before
        try device.fold([FoldEvent(mac.forget(.device(phone.deviceId), at: later + 1), version: 29)])
        #expect(Set(Suggestions.candidates(device.rows).keys) == [ShortcutID(bundleId: "com.example.soup", identifier: "tea")])

        // One shortcut: the others stay.
        var shortcut = before
        try shortcut.fold([FoldEvent(mac.forget(.shortcut(Self.coffee), at: later + 2), version: 29)])
        #expect(Suggestions.candidates(shortcut.rows)[Self.coffee] == nil)
        #expect(Suggestions.candidates(shortcut.rows).count == 1)
        #expect(shortcut.resums == 0, "a forget newer than everything clears at once, without the log")
    }

    /// The merge rule for a forget that arrives late (docs/decisions.md): it forgets only the
    /// donations older than itself, and a donation made before it but pushed after it (a device
    /// that was away) teaches nothing.
    @Test func aLateForgetForgetsOnlyWhatCameBeforeIt() throws {
        var phone = DeviceScript(), watch = DeviceScript(account: phone.account)
        let early = phone.donate("coffee", at: start + 8 * hour)
        let late = phone.donate("coffee", at: start + 32 * hour)
        let forget = watch.forget(.shortcut(Self.coffee), at: start + 20 * hour)
        let offline = watch.donate("coffee", at: start + 10 * hour)
        var store = FoldRowStore()
        try store.fold([FoldEvent(early, version: 1), FoldEvent(late, version: 2)])
        try store.fold([FoldEvent(forget, version: 3)])
        #expect(store.resums == 1)
        var expected = ShortcutHabits()
        expected.add(HabitDonation(deviceId: phone.deviceId, wallMillis: start + 32 * hour, utcOffsetMinutes: 0))
        #expect(Suggestions.candidates(store.rows)[Self.coffee] == expected)
        try store.fold([FoldEvent(offline, version: 4)])
        #expect(Suggestions.candidates(store.rows)[Self.coffee] == expected, "the watch's older donation does not bring back what was forgotten")
        #expect(store.shortcuts[Self.coffee]?.donationCount == 3, "the view keeps every donation")
    }

    /// Forgetting a place forgets where, not when (issue 67): the donations made in its slot
    /// before the forget, on every device, keep their hours and lose their place, at once when
    /// the forget is newer than all of them, from the log when it lands among them; a donation
    /// made there after it teaches the place again, and other places stay.
    @Test func forgettingAPlaceForgetsWhereNotWhen() throws {
        var phone = DeviceScript(), mac = DeviceScript(account: phone.account), watch = DeviceScript(account: phone.account)
        let gym = "3f" + String(repeating: "1", count: 30), office = "a0" + String(repeating: "2", count: 30)
        func donation(_ device: inout DeviceScript, at wall: Int64, _ place: String?) -> AcceptedEvent {
            device.event(at: wall, .donation(Donation(bundleId: Self.coffee.bundleId, identifier: Self.coffee.identifier, kind: .userActivity,
                                                      activityType: "com.example.soup.order", title: "Coffee", place: place)))
        }
        func taught(_ device: DeviceScript, _ wall: Int64, _ place: String?) -> HabitDonation {
            HabitDonation(deviceId: device.deviceId, wallMillis: wall, utcOffsetMinutes: 0, placeToken: place)
        }
        let walls = [start + 8 * hour, start + 9 * hour, start + 32 * hour]
        let donations = [donation(&phone, at: walls[0], gym), donation(&mac, at: walls[1], office), donation(&mac, at: walls[2], gym)]
        var store = FoldRowStore()
        try store.fold(donations.enumerated().map { FoldEvent($1, version: Int64($0 + 1)) })
        let before = try #require(Suggestions.candidates(store.rows)[Self.coffee])
        #expect(before.byDevice.values.contains { $0.places.keys.contains { PlaceToken.slot(ofKey: $0) == 0x3f } })

        // Newer than every donation: the gym's weights go at once, without the log; the hours stay.
        var now = store
        try now.fold([FoldEvent(watch.forget(.place(0x3f), at: start + 40 * hour), version: 4)])
        #expect(now.resums == 0)
        var expected = ShortcutHabits()
        for habit in [taught(phone, walls[0], nil), taught(mac, walls[1], office), taught(mac, walls[2], nil)] { expected.add(habit) }
        let forgotten = try #require(Suggestions.candidates(now.rows)[Self.coffee])
        #expect(forgotten == expected)
        #expect(forgotten.byDevice.mapValues(\.hours) == before.byDevice.mapValues(\.hours), "when is not forgotten")
        #expect(now.shortcuts == store.shortcuts, "views do not change")
        // The gym again after the forget: it teaches its place.
        try now.fold([FoldEvent(donation(&phone, at: start + 50 * hour, gym), version: 5)])
        expected.add(taught(phone, start + 50 * hour, gym))
        #expect(Suggestions.candidates(now.rows)[Self.coffee] == expected)

        // Landing among them (made at 20:00, pushed now): only the earlier gym donation loses its place.
        var late = store
        try late.fold([FoldEvent(watch.forget(.place(0x3f), at: start + 20 * hour), version: 4)])
        #expect(late.resums == 1)
        var lateExpected = ShortcutHabits()
        for habit in [taught(phone, walls[0], nil), taught(mac, walls[1], office), taught(mac, walls[2], gym)] { lateExpected.add(habit) }
        #expect(Suggestions.candidates(late.rows)[Self.coffee] == lateExpected)

        // A pause is of the account or a device: a place's is refused when read.
        let event = #"{"id":"\#(UUID())","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"learningForgotten","scope":"place","place":"3f"}"#
        #expect(try JSONDecoder().decode(Event.self, from: Data(event.utf8)).body == .learningForgotten(LearningForgotten(scope: .place(0x3f))))
        let pause = event.replacingOccurrences(of: #""learningForgotten","#, with: #""learningPaused","paused":true,"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Event.self, from: Data(pause.utf8)) }
    }

    /// Paused, donations sync and teach nothing; a resume that arrives late gives back the
    /// donations between it and the next change.
    @Test func pausedDonationsTeachNothingAndALateResumeGivesThemBack() throws {
        var phone = DeviceScript(), mac = DeviceScript(account: phone.account)
        let pause = phone.pause(.device(phone.deviceId), at: start + 1 * hour)
        let during = (2...5).map { phone.donate("coffee", at: start + Int64($0) * hour) }
        var store = FoldRowStore()
        try store.fold([FoldEvent(pause, version: 1)] + during.enumerated().map { FoldEvent($1, version: Int64($0 + 2)) })
        #expect(Suggestions.candidates(store.rows).isEmpty)
        #expect(store.shortcuts[Self.coffee]?.donationCount == 4)
        // The Mac's learning is not paused.
        try store.fold([FoldEvent(mac.donate("coffee", at: start + 6 * hour), version: 6)])
        #expect(Suggestions.candidates(store.rows)[Self.coffee]?.byDevice.keys.sorted { $0.isOrdered(before: $1) } == [mac.deviceId])
        // A resume made at 3:30 but pushed now: the donations at 4 and 5 teach, those at 2 and 3 do not.
        try store.fold([FoldEvent(mac.pause(.device(phone.deviceId), false, at: start + 3 * hour + hour / 2), version: 7)])
        #expect(store.resums == 1)
        let events = [pause] + during
        var expected = ShortcutHabits()
        for donation in during.suffix(2) { expected.add(HabitDonation(deviceId: phone.deviceId, wallMillis: donation.event.hlc.wallMillis, utcOffsetMinutes: 0)) }
        expected.add(HabitDonation(deviceId: mac.deviceId, wallMillis: start + 6 * hour, utcOffsetMinutes: 0))
        #expect(Suggestions.candidates(store.rows)[Self.coffee] == expected)
        #expect(events.count == 5)
    }

    /// A deletion that lands among a group's donations takes back what the covered ones taught,
    /// and a forgotten donation taught nothing: nothing of it is taken back (found by the
    /// property above, shrunk to this).
    @Test func aDeletionCoveringAForgottenDonationTakesBackNothingOfIt() throws {
        var phone = DeviceScript(), mac = DeviceScript(account: phone.account)
        let forgotten = phone.donate("coffee", group: "morning", at: start + 1 * hour)
        let forget = mac.forget(.account, at: start + 2 * hour)
        let kept = phone.donate("coffee", group: "morning", at: start + 4 * hour)
        var store = FoldRowStore()
        try store.fold([FoldEvent(forgotten, version: 1), FoldEvent(forget, version: 2), FoldEvent(kept, version: 3)])
        try store.fold([FoldEvent(mac.delete(.groupIdentifier("morning"), at: start + 3 * hour), version: 4)])
        #expect(store.recounts == 1)
        var expected = ShortcutHabits()
        expected.add(HabitDonation(deviceId: phone.deviceId, wallMillis: start + 4 * hour, utcOffsetMinutes: 0))
        #expect(Suggestions.candidates(store.rows)[Self.coffee] == expected)
    }
}
