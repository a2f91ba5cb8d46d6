import Foundation
import ShortcutSyncDomain

/// The scoring without the service: the same domain sums and scorer, kept in memory per person,
/// so that the model can be tried against the baselines and the oracle in seconds.
public struct OfflineSuggestions: Sendable {
    public var scorer: SuggestionScorer
    /// Whether donations and requests carry the person's places (where the population has them
    /// and the device holds the key): off, the same engine by time alone.
    public var usesPlaces: Bool
    var habits: [Int: [ShortcutID: ShortcutHabits]] = [:]

    public init(model: SuggestionModel = SuggestionModel(), usesPlaces: Bool = true) {
        scorer = SuggestionScorer(model: model)
        self.usesPlaces = usesPlaces
    }

    /// The tokens a device of `person` sends at `place`: none without the key or a place.
    func tokens(_ happening: SyntheticPopulation.Happening, of person: SyntheticPopulation.Person) -> [String] {
        usesPlaces ? person.tokens(device: happening.device, at: happening.place) : []
    }

    public func ask(_ happening: SyntheticPopulation.Happening, in population: SyntheticPopulation) -> [ShortcutID] {
        let person = population.people[happening.person]
        let moment = SuggestionMoment(deviceId: person.devices[happening.device].id, atMillis: happening.wallMillis,
                                      utcOffsetMinutes: happening.utcOffsetMinutes, places: tokens(happening, of: person))
        return scorer.rank(habits[happening.person] ?? [:], at: moment, limit: 5).map(\.shortcut)
    }

    public mutating func tell(_ happening: SyntheticPopulation.Happening, in population: SyntheticPopulation) {
        let person = population.people[happening.person]
        let shortcut = person.shortcuts[happening.shortcut].id
        switch happening.kind {
        case .deletion:
            habits[happening.person]?[shortcut] = nil
        case .donation:
            habits[happening.person, default: [:]][shortcut, default: ShortcutHabits()].add(HabitDonation(
                deviceId: person.devices[happening.device].id, wallMillis: happening.wallMillis,
                utcOffsetMinutes: happening.utcOffsetMinutes, placeToken: tokens(happening, of: person).first))
        }
    }

    /// The whole replay, offline.
    public static func evaluate(_ replay: SuggestionReplay, model: SuggestionModel = SuggestionModel(),
                                usesPlaces: Bool = true) async throws -> SuggestionScoreboard {
        var offline = OfflineSuggestions(model: model, usesPlaces: usesPlaces)
        return try await replay.run(
            ask: { offline.ask($0, in: replay.population) },
            tell: { offline.tell($0, in: replay.population) })
    }
}
