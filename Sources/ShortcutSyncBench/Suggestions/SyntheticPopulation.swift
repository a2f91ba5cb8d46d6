import Foundation
import ShortcutSyncDomain

/// The people of `bench suggestions`, made from a seed: weekly routines of different strengths
/// (weekday mornings, Friday evenings, weekends, lunches, evenings), 2–4 devices each with its
/// own share of each routine, devices that join late, noise, habits that change, apps that
/// delete a shortcut (the person may start again with another routine), and trips across time
/// zones (routines follow the person's local time). It keeps the true rates it drew from, so
/// the bench can rank by them: the oracle no model can beat.
public struct SyntheticPopulation: Sendable {
    /// One person's device: `joinedAt` is when it was signed in (late for some).
    public struct Device: Sendable {
        public var id: UUID
        public var platform: String
        public var joinedAt: Int64
    }

    /// A routine: on these days of the local week, at this local hour, with this probability,
    /// spread over the devices by `affinity`.
    struct Routine: Sendable {
        var days: [Int]
        var hour: Int
        var strength: Double
        var affinity: [Double]
        /// Where it is done (`Places`' indexes); nil: wherever the person is.
        var place: Int?
    }

    /// A habit of a place rather than of an hour (issue 67): whenever the person is at `place`
    /// and awake, the shortcut is used with this probability an hour — the gym playlist at the
    /// gym, the ATM finder at the bank — spread over the devices by `affinity`.
    struct PlaceRoutine: Sendable {
        var place: Int
        var strength: Double
        var affinity: [Double]
    }

    /// A stretch of time in which a shortcut is used with the same routines and noise.
    struct Phase: Sendable {
        var start: Int64
        var end: Int64
        var routines: [Routine]
        /// In a population with places only.
        var placeRoutines: [PlaceRoutine] = []
        /// Donations per waking hour, per device.
        var noise: [Double]
    }

    public struct Shortcut: Sendable {
        public var id: ShortcutID
        public var title: String
        var phases: [Phase]
        /// When the app deletes its donations (the end of a phase), if it does.
        var deletions: [Int64]
        /// In a population with places, where it is mostly used off its routines (a work tool
        /// at work, the lights at home): three times as often there, a third as often elsewhere.
        var anchor: Int? = nil
    }

    /// A stay away from home: another offset from UTC between `start` and `end`.
    struct Trip: Sendable {
        var start: Int64
        var end: Int64
        var utcOffsetMinutes: Int
    }

    /// Where a person of a population with places is, hour by hour (issue 67): home (0), work
    /// (1), the gym (2), a bank passed on the way home (3), one of 20 other places (4…23), or
    /// the place of a trip (24 + its index). Each is the person's own tokens (its cell's, then
    /// eight around it), as the client library makes them; the schedule is drawn per day and
    /// part of the day from `seed`, so it is the same whoever asks.
    public struct Places: Sendable {
        public static let home = 0, work = 1, gym = 2, bank = 3, elsewhere = 4, elsewhereCount = 20
        public var tokens: [[String]]
        /// Per device: whether it holds the place key.
        public var keyed: [Bool]
        var seed: UInt64
    }

    public struct Person: Sendable {
        public var index: Int
        public var devices: [Device]
        public var shortcuts: [Shortcut]
        var homeOffsetMinutes: Int
        var trips: [Trip]
        /// Where the person goes; nil in a population without places.
        public var places: Places?

        /// The tokens device `device` sends at `place` (its cell's first): none without the key or a place.
        public func tokens(device: Int, at place: Int?) -> [String] {
            guard let places, places.keyed[device], let place else { return [] }
            return places.tokens[place]
        }

        /// The place the person is at, at `wallMillis` (nil without places).
        public func place(at wallMillis: Int64) -> Int? {
            guard let places, let whereabouts = whereabouts(at: wallMillis) else { return nil }
            switch whereabouts {
            case .certain(let place):
                return place
            case .drawn(let odds, let dayIndex, let block):
                var rng = SplitMix64(state: places.seed &+ UInt64(bitPattern: dayIndex) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(block) &* 0xBF58_476D_1CE4_E5B9)
                let roll = Double.random(in: 0..<1, using: &rng)
                let other = Places.elsewhere + Int.random(in: 0..<Places.elsewhereCount, using: &rng)
                var sum = 0.0
                for (place, chance) in odds {
                    sum += chance
                    if roll < sum { return place }
                }
                return other
            }
        }

        /// Where the person may be at a moment: a place for certain (a trip's, home at night), or
        /// one drawn for the day's part (`block`) from `odds`, the rest of the chance spread over
        /// the other places alike.
        enum Whereabouts {
            case certain(Int)
            case drawn(odds: [(Int, Double)], dayIndex: Int64, block: Int)
        }

        /// Where the person may be at `wallMillis` (nil without places).
        func whereabouts(at wallMillis: Int64) -> Whereabouts? {
            guard places != nil else { return nil }
            if let trip = trips.firstIndex(where: { $0.start <= wallMillis && wallMillis < $0.end }) { return .certain(Places.elsewhere + Places.elsewhereCount + trip) }
            let local = wallMillis + Int64(utcOffsetMinutes(at: wallMillis)) * 60_000
            let dayIndex = local >= 0 ? local / SyntheticPopulation.day : (local + 1) / SyntheticPopulation.day - 1
            let hour = HabitClock.hourOfWeek(wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes(at: wallMillis))
            let day = hour / 24, hourOfDay = hour % 24
            guard (6..<22).contains(hourOfDay) else { return .certain(Places.home) }
            let weekday = day < 5
            let block = weekday ? [6, 9, 12, 14, 17].lastIndex { $0 <= hourOfDay }! : [6, 12, 17].lastIndex { $0 <= hourOfDay }!
            // (place, chance) of each part of the day, the rest elsewhere.
            let odds: [(Int, Double)] = switch (weekday, block) {
            case (true, 0): [(Places.home, 0.75), (Places.gym, 0.25)]
            case (true, 1), (true, 3): [(Places.work, 0.85)]
            case (true, 2): [(Places.work, 0.5), (Places.gym, 0.25)]
            case (true, _): day == 4 ? [(Places.bank, 0.4), (Places.home, 0.35)] : [(Places.home, 0.5), (Places.gym, 0.1), (Places.bank, 0.15)]
            default: [(Places.home, 0.5), (Places.gym, 0.2)]
            }
            return .drawn(odds: odds, dayIndex: dayIndex, block: block)
        }

        /// The person's offset from UTC at `wallMillis`.
        public func utcOffsetMinutes(at wallMillis: Int64) -> Int {
            trips.first { $0.start <= wallMillis && wallMillis < $0.end }?.utcOffsetMinutes ?? homeOffsetMinutes
        }

        /// The generator's true rate of `shortcut` on device `device` (an index) at `wallMillis`:
        /// the probability of a donation within that hour.
        public func trueRate(shortcut: Int, device: Int, at wallMillis: Int64) -> Double {
            trueRate(shortcut: shortcut, device: device, at: wallMillis, here: place(at: wallMillis))
        }

        /// The true rate at `wallMillis` for one who knows the time but not where the person is:
        /// the rates at each place the person may be then, weighed by its chance. What places
        /// can add to a ranking is the oracle's lead over this one (issue 67).
        public func trueRateByTime(shortcut: Int, device: Int, at wallMillis: Int64) -> Double {
            guard let whereabouts = whereabouts(at: wallMillis) else { return trueRate(shortcut: shortcut, device: device, at: wallMillis) }
            switch whereabouts {
            case .certain(let place):
                return trueRate(shortcut: shortcut, device: device, at: wallMillis, here: place)
            case .drawn(let odds, _, _):
                var rate = 0.0, named = 0.0
                for (place, chance) in odds {
                    rate += chance * trueRate(shortcut: shortcut, device: device, at: wallMillis, here: place)
                    named += chance
                }
                let other = (1 - named) / Double(Places.elsewhereCount)
                for place in Places.elsewhere..<(Places.elsewhere + Places.elsewhereCount) {
                    rate += other * trueRate(shortcut: shortcut, device: device, at: wallMillis, here: place)
                }
                return rate
            }
        }

        /// The true rate at `wallMillis` with the person at `here`.
        func trueRate(shortcut: Int, device: Int, at wallMillis: Int64, here: Int?) -> Double {
            guard devices[device].joinedAt <= wallMillis else { return 0 }
            guard let phase = shortcuts[shortcut].phases.first(where: { $0.start <= wallMillis && wallMillis < $0.end }) else { return 0 }
            let hour = HabitClock.hourOfWeek(wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes(at: wallMillis))
            let day = hour / 24, hourOfDay = hour % 24
            let anchored = shortcuts[shortcut].anchor.map { $0 == here ? 3.0 : 1.0 / 3 } ?? 1
            var rate = (7..<23).contains(hourOfDay) ? phase.noise[device] * anchored : 0
            for routine in phase.routines where routine.hour == hourOfDay && routine.days.contains(day) && (routine.place == nil || routine.place == here) {
                // A routine is the person's: before a device joins, its share is done on the others.
                var joined = 0.0
                for (other, share) in routine.affinity.enumerated() where devices[other].joinedAt <= wallMillis { joined += share }
                rate += routine.strength * routine.affinity[device] / joined
            }
            for routine in phase.placeRoutines where routine.place == here && (7..<23).contains(hourOfDay) {
                var joined = 0.0
                for (other, share) in routine.affinity.enumerated() where devices[other].joinedAt <= wallMillis { joined += share }
                rate += routine.strength * routine.affinity[device] / joined
            }
            return min(rate, 1)
        }
    }

    /// One thing that happened, in time order.
    public struct Happening: Sendable {
        public enum Kind: Sendable { case donation, deletion }
        public var kind: Kind
        public var person: Int
        public var device: Int
        public var shortcut: Int
        public var wallMillis: Int64
        public var utcOffsetMinutes: Int
        /// Where the person was (`Places`), nil without places.
        public var place: Int?
    }

    public var people: [Person]
    public var start: Int64
    public var end: Int64

    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour
    static let week: Int64 = 7 * day
    static let platforms = ["iOS", "iPadOS", "macOS", "watchOS"]

    /// How its people live.
    public var shape: PopulationShape

    /// `people` people over `weeks` weeks from Monday 2026-01-05 00:00 UTC, living as `shape` says.
    public init(people count: Int, weeks: Int, seed: UInt64, shape: PopulationShape = .standard) {
        var rng = SplitMix64(state: seed)
        let start: Int64 = 1_767_571_200_000
        let end = start + Int64(weeks) * Self.week
        var people: [Person] = []
        for index in 0..<count {
            people.append(Self.person(index, start: start, end: end, shortcuts: shape.shortcuts, shape: shape, rng: &rng))
        }
        self.shape = shape
        self.start = start
        self.end = end
        self.people = people
    }

    static func person(_ index: Int, start: Int64, end: Int64, shortcuts range: ClosedRange<Int>, shape: PopulationShape,
                       rng: inout SplitMix64) -> Person {
        let deviceCount = Int.random(in: shape.devices, using: &rng)
        let span = end - start
        let devices = (0..<deviceCount).map { d in
            // The first device is there from the start; half of the others join late.
            let late = d > 0 && Bool.random(using: &rng)
            let joined = late ? start + Int64(Double(span) * Double.random(in: 0.3...0.8, using: &rng)) : start
            return Device(id: rng.nextUUID(), platform: platforms[d], joinedAt: joined)
        }
        let homeOffset = [-480, -300, 0, 60, 330, 540].randomElement(using: &rng)!
        var trips: [Trip] = []
        for _ in 0..<Int.random(in: shape.trips, using: &rng) {
            let from = start + Int64(Double(span) * Double.random(in: 0.2...0.9, using: &rng))
            let shift = [-9, -6, -3, 3, 6, 9].randomElement(using: &rng)! * 60
            trips.append(Trip(start: from, end: min(from + Int64.random(in: 4...10, using: &rng) * day, end),
                              utcOffsetMinutes: min(max(homeOffset + shift, -720), 840)))
        }
        var shortcuts = (0..<Int.random(in: range, using: &rng)).map { s in
            shortcut(s, person: index, devices: deviceCount, start: start, end: end, shape: shape, rng: &rng)
        }
        // Places are drawn from a generator of their own: the populations without them are
        // drawn exactly as they always were.
        var places: Places?
        if shape.places {
            var placeRng = SplitMix64(state: rng.next() ^ 0x5151_CAFE)
            let count = Places.elsewhere + Places.elsewhereCount + trips.count
            let tokens = (0..<count).map { _ in (0..<9).map { _ in placeRng.nextPlaceToken() } }
            let keyed = (0..<deviceCount).map { $0 == 0 || Double.random(in: 0..<1, using: &placeRng) >= shape.keyless }
            places = Places(tokens: tokens, keyed: keyed, seed: placeRng.next())
            for s in shortcuts.indices {
                let roll = Double.random(in: 0..<1, using: &placeRng)
                shortcuts[s].anchor = roll < 0.4 ? Places.home : roll < 0.7 ? Places.work : roll < 0.8 ? Places.gym : roll < 0.85 ? Places.bank
                    : Places.elsewhere + Int.random(in: 0..<Places.elsewhereCount, using: &placeRng)
                for p in shortcuts[s].phases.indices {
                    // A third of the shortcuts are a habit of their place too: strong where the
                    // person goes now and then, mild where they spend the day.
                    if let anchor = shortcuts[s].anchor, Double.random(in: 0..<1, using: &placeRng) < 0.35 {
                        let often = anchor == Places.home || anchor == Places.work
                        let main = Int.random(in: 0..<deviceCount, using: &placeRng)
                        var affinity = (0..<deviceCount).map { $0 == main ? 1.0 : Double.random(in: 0...0.3, using: &placeRng) }
                        let total = affinity.reduce(0, +)
                        affinity = affinity.map { $0 / total }
                        shortcuts[s].phases[p].placeRoutines = [PlaceRoutine(
                            place: anchor, strength: often ? Double.random(in: 0.03...0.1, using: &placeRng) : Double.random(in: 0.3...0.8, using: &placeRng),
                            affinity: affinity)]
                    }
                    for r in shortcuts[s].phases[p].routines.indices {
                        shortcuts[s].phases[p].routines[r].place = routinePlace(shortcuts[s].phases[p].routines[r], rng: &placeRng)
                    }
                }
            }
        }
        return Person(index: index, devices: devices, shortcuts: shortcuts, homeOffsetMinutes: homeOffset, trips: trips, places: places)
    }

    /// Where a routine is done: a place the person can be at its hours.
    static func routinePlace(_ routine: Routine, rng: inout SplitMix64) -> Int {
        let weekdays = routine.days.allSatisfy { $0 < 5 }
        let choices: [Int] = switch routine.hour {
        case 6..<9 where weekdays: [Places.home, Places.gym]
        case 12..<14 where weekdays: [Places.work, Places.gym]
        case 9..<17 where weekdays: [Places.work]
        case 17..<22 where routine.days == [4]: [Places.bank, Places.home]
        case 17..<22: [Places.home, Places.home, Places.gym, Places.bank]
        default: [Places.home, Places.gym]
        }
        return choices.randomElement(using: &rng)!
    }

    static func shortcut(_ index: Int, person: Int, devices: Int, start: Int64, end: Int64, shape: PopulationShape,
                         rng: inout SplitMix64) -> Shortcut {
        let id = ShortcutID(bundleId: "com.example.app\(index % 7)", identifier: "p\(person)-s\(index)")
        var phases: [Phase] = []
        var deletions: [Int64] = []
        var from = start
        let span = end - start
        while from < end {
            var to = end
            // Some shortcuts change habits or are deleted by their app (and maybe used again later).
            let roll = Double.random(in: 0..<1, using: &rng)
            if roll < 0.3 { to = min(end, from + Int64(Double(span) * Double.random(in: 0.3...0.7, using: &rng))) }
            phases.append(Phase(start: from, end: to, routines: routines(devices: devices, shape: shape, rng: &rng),
                                noise: (0..<devices).map { _ in Double.random(in: shape.noise, using: &rng) }))
            guard to < end else { break }
            if roll < 0.12 {
                deletions.append(to)
                // Half the time the person comes back to it, after a while and with new habits.
                guard Bool.random(using: &rng) else { break }
                from = to + Int64.random(in: 1...10, using: &rng) * day
            } else {
                from = to
            }
        }
        return Shortcut(id: id, title: "Shortcut \(index)", phases: phases, deletions: deletions)
    }

    static func routines(devices: Int, shape: PopulationShape, rng: inout SplitMix64) -> [Routine] {
        (0..<Int.random(in: shape.routines, using: &rng)).map { _ in
            let (days, hour): ([Int], Int) = switch Int.random(in: 0..<6, using: &rng) {
            case 0: (Array(0..<5), Int.random(in: 6...9, using: &rng))          // weekday mornings
            case 1: ([4], Int.random(in: 17...21, using: &rng))                 // Friday evenings
            case 2: ([5, 6], Int.random(in: 9...15, using: &rng))               // weekends
            case 3: (Array(0..<7), Int.random(in: 18...22, using: &rng))        // every evening
            case 4: (Array(0..<5), Int.random(in: 12...13, using: &rng))        // weekday lunches
            default: ([Int.random(in: 0..<7, using: &rng)], Int.random(in: 7...21, using: &rng))  // one day a week
            }
            // Each routine mostly lives on one device, a little on the others.
            let main = Int.random(in: 0..<devices, using: &rng)
            var affinity = (0..<devices).map { $0 == main ? 1.0 : Double.random(in: 0...0.3, using: &rng) }
            let total = affinity.reduce(0, +)
            affinity = affinity.map { $0 / total }
            return Routine(days: days, hour: hour, strength: Double.random(in: shape.routineStrength, using: &rng), affinity: affinity, place: nil)
        }
    }

    /// Everything that happens, in time order (ties by person, device, shortcut), from `seed`.
    public func happenings(seed: UInt64) -> [Happening] {
        var rng = SplitMix64(state: seed)
        var all: [Happening] = []
        for person in people {
            var hour = start
            var deletions = person.shortcuts.enumerated().flatMap { s, shortcut in shortcut.deletions.map { (s, $0) } }
            deletions.sort { $0.1 < $1.1 }
            while hour < end {
                for d in person.devices.indices where person.devices[d].joinedAt <= hour {
                    for s in person.shortcuts.indices {
                        let rate = person.trueRate(shortcut: s, device: d, at: hour)
                        guard rate > 0, Double.random(in: 0..<1, using: &rng) < rate else { continue }
                        let at = hour + Int64.random(in: 0..<Self.hour, using: &rng)
                        all.append(Happening(kind: .donation, person: person.index, device: d, shortcut: s,
                                             wallMillis: at, utcOffsetMinutes: person.utcOffsetMinutes(at: at), place: person.place(at: at)))
                    }
                }
                hour += Self.hour
            }
            for (s, at) in deletions {
                // The app on the person's first device deletes them.
                all.append(Happening(kind: .deletion, person: person.index, device: 0, shortcut: s,
                                     wallMillis: at, utcOffsetMinutes: person.utcOffsetMinutes(at: at), place: person.place(at: at)))
            }
        }
        all.sort { ($0.wallMillis, $0.person, $0.device, $0.shortcut) < ($1.wallMillis, $1.person, $1.device, $1.shortcut) }
        return all
    }
}
