import Foundation
import PropertyBased
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// Suggestions as properties: the sums the fold keeps, and so the suggestions at any moment,
/// depend on the set of accepted events only, bit for bit (DESIGN §3).
@Suite struct SuggestionPropertyTests {
    static let devices = FoldPropertyTests.devices
    static let identifiers = ["atm", "coffee", "news", "run"]
    static let bundles = ["com.example.bank", "com.example.life"]
    static let groups: [String?] = [nil, "morning"]
    static let start: Int64 = 1_767_571_200_000  // Monday 2026-01-05 00:00 UTC
    static let week: Int64 = 7 * 24 * 3_600_000
    /// Places (`PlaceToken`s); two share a slot, as two places of one person can.
    static let places: [String?] = [nil, "0a" + String(repeating: "1", count: 30), "0a" + String(repeating: "2", count: 30),
                                    "f3" + String(repeating: "3", count: 30)]

    /// A random history over six weeks: donations (some not eligible for prediction, with
    /// offsets from UTC, some at places), deletions by identifiers, group and app, from four devices, over few
    /// identifiers so that deletions cover some donations and not others.
    static func history(from choices: [Int]) -> [AcceptedEvent] {
        var seqs = [Int64](repeating: 0, count: devices.count)
        return choices.map { choice in
            var rng = SeededGenerator(seed: UInt64(choice))
            let device = Int.random(in: 0..<devices.count, using: &rng)
            seqs[device] += 1
            let bundle = bundles.randomElement(using: &rng)!
            let identifier = identifiers.randomElement(using: &rng)!
            let body: EventBody = switch Int.random(in: 0..<10, using: &rng) {
            case 0: .deletion(Deletion(bundleId: bundle, selector: .identifiers([identifier])))
            case 1: .deletion(Deletion(bundleId: bundle, selector: .groupIdentifier("morning")))
            case 2: .deletion(Deletion(bundleId: bundle, selector: .all))
            default:
                .donation(Donation(
                    bundleId: bundle, identifier: identifier, kind: .intent, intentType: "I", title: "t",
                    groupIdentifier: groups.randomElement(using: &rng)!, eligibleForPrediction: Int.random(in: 0..<5, using: &rng) > 0,
                    utcOffsetMinutes: [nil, -300, 60, 540].randomElement(using: &rng)!, place: places.randomElement(using: &rng)!))
            }
            let wall = start + Int64.random(in: 0..<(6 * week), using: &rng)
            return AcceptedEvent(deviceId: devices[device], event: Event(seq: seqs[device], hlc: HLCTimestamp(wallMillis: wall), body: body))
        }
    }

    /// The sums straight from the merge rules: every eligible donation no deletion covers.
    static func reference(_ events: [AcceptedEvent]) -> [ShortcutID: ShortcutHabits] {
        var sums: [ShortcutID: ShortcutHabits] = [:]
        for event in events {
            guard case .donation(let donation) = event.event.body, donation.eligibleForPrediction,
                  !isCovered(donation, key: event.key, in: events) else { continue }
            sums[ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier), default: ShortcutHabits()].add(HabitDonation(
                deviceId: event.deviceId, wallMillis: event.event.hlc.wallMillis, utcOffsetMinutes: donation.utcOffsetMinutes ?? 0,
                placeToken: donation.place))
        }
        return sums.filter { !$0.value.isEmpty }
    }

    /// Whether a deletion of `events` newer than the donation selects it.
    static func isCovered(_ donation: Donation, key: EventKey, in events: [AcceptedEvent]) -> Bool {
        events.contains { other in
            guard case .deletion(let deletion) = other.event.body, deletion.bundleId == donation.bundleId, key < other.key else { return false }
            switch deletion.selector {
            case .identifiers(let identifiers): return identifiers.contains(donation.identifier)
            case .groupIdentifier(let group): return donation.groupIdentifier == group
            case .all: return true
            }
        }
    }

    /// The sums the fold rows hold, per shortcut (its groups together), as the service reads them.
    static func candidates(_ rows: AccountFoldRows) -> [ShortcutID: ShortcutHabits] {
        var sums: [ShortcutID: ShortcutHabits] = [:]
        for row in rows.groups.values { sums[row.id.shortcut, default: ShortcutHabits()].add(row.habits) }
        return sums.filter { !$0.value.isEmpty }
    }

    /// `events` arriving in the order given, each once (the push skips a retried event), folded
    /// in batches of random sizes through stored rows.
    static func fold(_ arrivals: [AcceptedEvent], seed: Int) throws -> FoldRowStore {
        var seen: Set<EventKey> = []
        let once = arrivals.filter { seen.insert($0.key).inserted }
        var rng = SeededGenerator(seed: UInt64(seed))
        var store = FoldRowStore()
        var done = 0
        while done < once.count {
            let size = Int.random(in: 1...8, using: &rng)
            let batch = once[done..<min(once.count, done + size)].enumerated().map { FoldEvent($1, version: Int64(done + $0 + 1)) }
            try store.fold(batch)
            done += batch.count
        }
        return store
    }

    static let choices = Gen.int(in: 0...Int(Int32.max)).array(of: 1...50)
    static let seeds = Gen.int(in: 0...Int(Int32.max))

    @Test func shuffledAndDuplicatedArrivalGivesTheSameSumsAndSuggestionsBitForBit() async {
        await propertyCheck(count: 200, input: Self.choices, Self.seeds) { choices, seed in
            let events = Self.history(from: choices)
            var rng = SeededGenerator(seed: UInt64(seed))
            var delivered = events + events.filter { _ in Bool.random(using: &rng) }
            delivered.shuffle(using: &rng)
            let inOrder = Self.candidates(try! Self.fold(events, seed: seed).rows)
            let shuffled = Self.candidates(try! Self.fold(delivered, seed: seed &+ 1).rows)
            #expect(shuffled == inOrder)
            #expect(inOrder == Self.reference(events))
            // The suggestions at any moment, on any device, are therefore the same too.
            for _ in 0..<3 {
                let moment = SuggestionMoment(deviceId: Self.devices.randomElement(using: &rng)!,
                                              atMillis: Self.start + Int64.random(in: 0..<(8 * Self.week), using: &rng),
                                              utcOffsetMinutes: [0, 60, -300].randomElement(using: &rng)!,
                                              places: [[], [Self.places[1]!, Self.places[3]!], [Self.places[3]!]].randomElement(using: &rng)!)
                let scorer = SuggestionScorer()
                #expect(scorer.rank(shuffled, at: moment, limit: 20) == scorer.rank(inOrder, at: moment, limit: 20))
            }
        }
    }

    /// Devices signed out, chosen by `choice`: each one's sign-out is appended as its last event
    /// (the greatest seq, as the service writes it), after all of its other events.
    static func signingOut(_ events: [AcceptedEvent], choice: Int) -> (events: [AcceptedEvent], signedOut: Set<UUID>) {
        var rng = SeededGenerator(seed: UInt64(choice))
        let signedOut = Set(devices.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 })
        let signOuts = signedOut.sorted { $0.isOrdered(before: $1) }.map { device in
            AcceptedEvent(deviceId: device, event: Event(seq: Limits.seqRange.upperBound,
                                                         hlc: HLCTimestamp(wallMillis: start + Int64.random(in: 0..<(7 * week), using: &rng)),
                                                         body: .signedOut))
        }
        return (events + signOuts, signedOut)
    }

    /// `events` shuffled as pushes can arrive: devices interleave in any order, each device's own
    /// events come in its seq order (a device's seqs are contiguous), and some arrive twice.
    static func arrivals(_ events: [AcceptedEvent], seed: Int) -> [AcceptedEvent] {
        var rng = SeededGenerator(seed: UInt64(seed))
        var shuffled = events + events.filter { _ in Bool.random(using: &rng) }
        shuffled.shuffle(using: &rng)
        // Each device's places in the shuffle, filled with its events in seq order.
        var byDevice = Dictionary(grouping: shuffled, by: \.deviceId).mapValues { $0.sorted { $0.event.seq < $1.event.seq } }
        return shuffled.map { byDevice[$0.deviceId]!.removeFirst() }
    }

    /// Signing a device out forgets what it taught: the sums are those of the other devices'
    /// eligible uncovered donations, bit for bit, in whatever order the devices' pushes arrive,
    /// folded in batches of any size (a rebuild folds the log in its own batches).
    @Test func aSignedOutDevicesSumsAreForgottenWhateverTheArrivalOrder() async {
        await propertyCheck(count: 200, input: Self.choices, Self.seeds) { choices, seed in
            let (events, signedOut) = Self.signingOut(Self.history(from: choices), choice: seed)
            // Its deletions still cover what they cover: only its own sums go.
            let kept = Self.reference(events).compactMapValues { sums -> ShortcutHabits? in
                var sums = sums
                for device in signedOut { sums.drop(device) }
                return sums.isEmpty ? nil : sums
            }
            let inOrder = Self.candidates(try! Self.fold(events, seed: seed).rows)
            let arrived = Self.candidates(try! Self.fold(Self.arrivals(events, seed: seed &+ 1), seed: seed &+ 2).rows)
            #expect(inOrder == kept)
            #expect(arrived == kept)
            for sums in arrived.values { #expect(sums.byDevice.keys.allSatisfy { !signedOut.contains($0) }) }
        }
    }

    @Test func sumsAreTheSameWhateverOrderTheyAreAddedAndTakenBackIn() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max)).array(of: 1...40), Self.seeds) { walls, seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let donations = walls.map {
                HabitDonation(deviceId: Self.devices[$0 % 4], wallMillis: Int64($0) * 997_000, utcOffsetMinutes: [0, 60, 840, -720][$0 % 4],
                              place: [nil, 0, 7, 255][($0 / 4) % 4])
            }
            var forwards = ShortcutHabits(), backwards = ShortcutHabits()
            for donation in donations { forwards.add(donation) }
            for donation in donations.shuffled(using: &rng) { backwards.add(donation) }
            #expect(forwards == backwards)
            #expect(ShortcutHabits(bytes: forwards.bytes ?? []) == forwards)
            // Taking every donation back, in yet another order, leaves nothing at all.
            for donation in donations.shuffled(using: &rng) { forwards.remove(donation) }
            #expect(forwards.isEmpty)
            #expect(forwards.bytes == nil)
        }
    }

    @Test func weightsHalveEveryThreeWeeks() {
        let now = Self.start + 10 * Self.week
        let threeWeeksAgo = now - 3 * Self.week
        let scale = HabitClock.scale(atMillis: now)
        let recent = HabitClock.weight(wallMillis: now).doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
        let older = HabitClock.weight(wallMillis: threeWeeksAgo).doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
        #expect(abs(recent - 1) < 1e-6)
        #expect(abs(older - 0.5) < 1e-6)
        // Far outside any real clock, weights stay finite and never trap.
        for wall in [Int64.min, -1, 0, Int64.max] {
            let sums = HabitClock.weight(wallMillis: wall)
            #expect(sums.doubleValue(timesTwoToThe: HabitClock.scale(atMillis: wall).exponent).isFinite)
        }
    }

    @Test func hoursOfTheWeekFollowTheLocalClock() {
        // Monday 2026-01-05 00:30 UTC is hour 0; in New York (−300) it is Sunday 19:30, hour 163.
        let mondayHalfPastMidnight = Self.start + 30 * 60_000
        #expect(HabitClock.hourOfWeek(wallMillis: mondayHalfPastMidnight, utcOffsetMinutes: 0) == 0)
        #expect(HabitClock.hourOfWeek(wallMillis: mondayHalfPastMidnight, utcOffsetMinutes: -300) == 6 * 24 + 19)
        #expect(HabitClock.hourOfWeek(wallMillis: mondayHalfPastMidnight, utcOffsetMinutes: 540) == 9)
        #expect((0..<168).contains(HabitClock.hourOfWeek(wallMillis: .min, utcOffsetMinutes: -720)))
        #expect((0..<168).contains(HabitClock.hourOfWeek(wallMillis: .max, utcOffsetMinutes: 840)))
    }
}
