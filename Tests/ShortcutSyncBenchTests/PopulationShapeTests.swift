import Foundation
import ShortcutSyncBench
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
