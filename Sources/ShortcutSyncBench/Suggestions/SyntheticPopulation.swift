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
    }

    /// A stretch of time in which a shortcut is used with the same routines and noise.
    struct Phase: Sendable {
        var start: Int64
        var end: Int64
        var routines: [Routine]
        /// Donations per waking hour, per device.
        var noise: [Double]
    }

    public struct Shortcut: Sendable {
        public var id: ShortcutID
        public var title: String
        var phases: [Phase]
        /// When the app deletes its donations (the end of a phase), if it does.
        var deletions: [Int64]
    }

    /// A stay away from home: another offset from UTC between `start` and `end`.
    struct Trip: Sendable {
        var start: Int64
        var end: Int64
        var utcOffsetMinutes: Int
    }

    public struct Person: Sendable {
        public var index: Int
        public var devices: [Device]
        public var shortcuts: [Shortcut]
        var homeOffsetMinutes: Int
        var trips: [Trip]

        /// The person's offset from UTC at `wallMillis`.
        public func utcOffsetMinutes(at wallMillis: Int64) -> Int {
            trips.first { $0.start <= wallMillis && wallMillis < $0.end }?.utcOffsetMinutes ?? homeOffsetMinutes
        }

        /// The generator's true rate of `shortcut` on device `device` (an index) at `wallMillis`:
        /// the probability of a donation within that hour.
        public func trueRate(shortcut: Int, device: Int, at wallMillis: Int64) -> Double {
            guard devices[device].joinedAt <= wallMillis else { return 0 }
            guard let phase = shortcuts[shortcut].phases.first(where: { $0.start <= wallMillis && wallMillis < $0.end }) else { return 0 }
            let hour = HabitClock.hourOfWeek(wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes(at: wallMillis))
            let day = hour / 24, hourOfDay = hour % 24
            var rate = (7..<23).contains(hourOfDay) ? phase.noise[device] : 0
            for routine in phase.routines where routine.hour == hourOfDay && routine.days.contains(day) {
                // A routine is the person's: before a device joins, its share is done on the others.
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
        let shortcuts = (0..<Int.random(in: range, using: &rng)).map { s in
            shortcut(s, person: index, devices: deviceCount, start: start, end: end, shape: shape, rng: &rng)
        }
        return Person(index: index, devices: devices, shortcuts: shortcuts, homeOffsetMinutes: homeOffset, trips: trips)
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
            return Routine(days: days, hour: hour, strength: Double.random(in: shape.routineStrength, using: &rng), affinity: affinity)
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
                                             wallMillis: at, utcOffsetMinutes: person.utcOffsetMinutes(at: at)))
                    }
                }
                hour += Self.hour
            }
            for (s, at) in deletions {
                // The app on the person's first device deletes them.
                all.append(Happening(kind: .deletion, person: person.index, device: 0, shortcut: s,
                                     wallMillis: at, utcOffsetMinutes: person.utcOffsetMinutes(at: at)))
            }
        }
        all.sort { ($0.wallMillis, $0.person, $0.device, $0.shortcut) < ($1.wallMillis, $1.person, $1.device, $1.shortcut) }
        return all
    }
}
