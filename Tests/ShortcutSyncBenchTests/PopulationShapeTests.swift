import Foundation
@testable import ShortcutSyncBench
import ShortcutSyncDomain
import Testing

/// The populations `bench suggestions` scores the model on (issue 34): the standard one is the
/// population the bench always replayed, drawn the same way; each other one lives as its shape says.
@Suite struct PopulationShapeTests {
    @Test func theStandardShapeDrawsThePopulationTheBenchAlwaysReplayed() {
        let before = SyntheticPopulation(people: 6, weeks: 3, seed: 21)
        let standard = SyntheticPopulation(people: 6, weeks: 3, seed: 21, shape: .standard)
        let happenings = before.happenings(seed: 22)
        #expect(!happenings.isEmpty)
        #expect(standard.happenings(seed: 22).map(\.wallMillis) == happenings.map(\.wallMillis))
        #expect(standard.people.map { $0.devices.map(\.id) } == before.people.map { $0.devices.map(\.id) })
    }

    @Test func eachShapeLivesAsItSays() throws {
        #expect(Set(PopulationShape.all.map(\.name)).count == PopulationShape.all.count)
        let people = 20, weeks = 4
        func population(_ name: String) throws -> SyntheticPopulation {
            SyntheticPopulation(people: people, weeks: weeks, seed: 5, shape: try #require(PopulationShape.all.first { $0.name == name }))
        }
        #expect(try population("four devices").people.allSatisfy { $0.devices.count == 4 })
        #expect(try population("one or two devices").people.allSatisfy { (1...2).contains($0.devices.count) })
        // Travellers leave home 3 to 6 times: their offsets change more often than the standard people's.
        func offsetChanges(_ population: SyntheticPopulation) -> Int {
            population.people.map { person in
                let hours = stride(from: population.start, to: population.end, by: 3_600_000).map { person.utcOffsetMinutes(at: $0) }
                return zip(hours, hours.dropFirst()).count { $0 != $1 }
            }.reduce(0, +)
        }
        #expect(offsetChanges(try population("travellers")) > offsetChanges(try population("standard")))
        // Noisier people donate more off their routines; weaker routines give fewer donations.
        let standard = try population("standard").happenings(seed: 6).count
        #expect(try population("noisy").happenings(seed: 6).count > standard)
        #expect(try population("weak routines").happenings(seed: 6).count < standard)
    }
}

/// The populations with places (issue 67): people go between home, work, the gym, a bank and
/// elsewhere on a schedule of their own, each routine is done at one place, some devices hold
/// no key; and the same engine ranks them better with the places than without.
@Suite struct PlacePopulationTests {
    static func population(_ index: Int, people: Int = 20, weeks: Int = 6) -> SyntheticPopulation {
        SyntheticPopulation(people: people, weeks: weeks, seed: 5, shape: PopulationShape.placed[index])
    }

    @Test func peopleGoBetweenTheirPlacesAndSomeDevicesHaveNoKey() throws {
        #expect(Set(PopulationShape.placed.map(\.name)).count == PopulationShape.placed.count)
        #expect(SyntheticPopulation(people: 3, weeks: 2, seed: 5).people.allSatisfy { $0.places == nil }, "the standard people have none")
        let population = Self.population(0)
        let hour: Int64 = 3_600_000
        var atWork = 0, atHomeAtNight = 0, weekdays = 0
        for person in population.people {
            let places = try #require(person.places)
            #expect(places.keyed.first == true, "the first device always holds the key")
            #expect(places.tokens.allSatisfy { $0.count == 9 && Set($0).count == 9 && $0.allSatisfy(PlaceToken.isValid) })
            for day in 0..<5 {
                // Local 10:00 and 03:00 of the first week's weekdays (the person's home offset).
                let midnight = population.start + Int64(day) * 24 * hour - Int64(person.utcOffsetMinutes(at: population.start)) * 60_000
                weekdays += 1
                if person.place(at: midnight + 10 * hour + 1_800_000) == SyntheticPopulation.Places.work { atWork += 1 }
                if person.place(at: midnight + 3 * hour) == SyntheticPopulation.Places.home { atHomeAtNight += 1 }
            }
        }
        #expect(atHomeAtNight == weekdays, "everyone is home at night")
        #expect(atWork > weekdays / 2 && atWork < weekdays, "most weekday mornings at work, not all")
        let keyless = population.people.flatMap { $0.places!.keyed.dropFirst() }.filter { !$0 }.count
        #expect(keyless > 0)
        let happenings = population.happenings(seed: 6)
        #expect(happenings.allSatisfy { $0.place != nil })
    }

    @Test func theSameEngineRanksBetterWithThePlaces() async throws {
        var replay = SuggestionReplay(population: Self.population(0), seed: 6)
        let timeAlone = try await OfflineSuggestions.evaluate(replay, usesPlaces: false)
        #expect(timeAlone.all[.oracleByTime] == nil, "asked for only")
        replay.ranksByTimeOracle = true
        let placed = try await OfflineSuggestions.evaluate(replay)
        let withPlaces = try #require(placed.all[.service]), without = try #require(timeAlone.all[.service])
        let oracle = try #require(placed.all[.oracle])
        print("places: Hit@1 \(withPlaces.hitAt1) without \(without.hitAt1) oracle \(oracle.hitAt1); Hit@4 \(withPlaces.hitAt4) without \(without.hitAt4) oracle \(oracle.hitAt4); scored \(withPlaces.scored)")
        #expect(withPlaces.scored == without.scored && withPlaces.scored > 500)
        #expect(withPlaces.hitAt1 > without.hitAt1)
        // The oracle that knows the time and not the place ranks the same donations, and worse.
        let byTime = try #require(placed.all[.oracleByTime])
        print("places: the oracle by time alone Hit@1 \(byTime.hitAt1)")
        #expect(byTime.scored == oracle.scored && byTime.hitAt1 < oracle.hitAt1)
    }

    /// The rate by time alone is the rates at each place the person may be, weighed by its
    /// chance: at night (home, for certain) the oracle's own; by day between the least and the
    /// most of a place's.
    @Test func theRateByTimeIsThePlacesRatesWeighed() throws {
        let population = Self.population(0)
        let hour: Int64 = 3_600_000
        let moments: [Int64] = (0..<16).map { population.start + 7 * 24 * hour + Int64($0) * 3 * hour }
        var compared = 0
        for person in population.people.prefix(5) {
            for shortcut in person.shortcuts.indices {
                for at in moments {
                    let byTime = person.trueRateByTime(shortcut: shortcut, device: 0, at: at)
                    let whereabouts = try #require(person.whereabouts(at: at), "a population with places has whereabouts")
                    switch whereabouts {
                    case .certain(let place):
                        #expect(byTime == person.trueRate(shortcut: shortcut, device: 0, at: at, here: place))
                    case .drawn:
                        let placeCount = SyntheticPopulation.Places.elsewhere + SyntheticPopulation.Places.elsewhereCount
                        var rates: [Double] = []
                        for place in 0..<placeCount { rates.append(person.trueRate(shortcut: shortcut, device: 0, at: at, here: place)) }
                        let least = rates.min() ?? 0, most = rates.max() ?? 0
                        #expect(byTime >= least - 1e-12 && byTime <= most + 1e-12)
                    }
                    compared += 1
                }
            }
        }
        #expect(compared > 100)
    }
}
