import Foundation
import ShortcutSyncDomain

/// Replays a population's happenings in time order: before each donation, asks the service
/// (`ask`) for the device's suggestions at that moment and scores them beside the baselines
/// (most frequent and most recent per person, from the same events) and the oracle (the
/// generator's true rates); then tells the service what happened (`tell`).
///
/// Every way of ranking chooses among the same candidates: the shortcuts the person has
/// (donated and not deleted). A donation is scored when its shortcut is one of them and the
/// person's first two weeks (everyone's warm-up) are over.
public struct SuggestionReplay: Sendable {
    public let population: SyntheticPopulation
    public let happenings: [SyntheticPopulation.Happening]
    /// Whether the replay also ranks by the oracle that knows the time and not the place
    /// (`SuggestionScoreboard.Method.oracleByTime`, populations with places only): it weighs the
    /// rate at every place the person may be, for every candidate, so only where it is reported.
    public var ranksByTimeOracle = false
    public static let warmUp: Int64 = 14 * 24 * 3_600_000

    /// What a person has: per shortcut index its uncovered donations and when it was last donated.
    struct PersonState {
        var counts: [Int: Int] = [:]
        var last: [Int: Int64] = [:]
    }

    public init(population: SyntheticPopulation, seed: UInt64) {
        self.population = population
        happenings = population.happenings(seed: seed)
    }

    /// Replays the happenings of `people` (nil: everyone's) in time order. People are independent,
    /// so each may be replayed apart (side by side) and the boards merged.
    public func run(
        people: Set<Int>? = nil,
        ask: (SyntheticPopulation.Happening) async throws -> [ShortcutID],
        tell: (SyntheticPopulation.Happening) async throws -> Void
    ) async throws -> SuggestionScoreboard {
        var board = SuggestionScoreboard()
        var states = [PersonState](repeating: PersonState(), count: population.people.count)
        for happening in happenings where people?.contains(happening.person) ?? true {
            let person = population.people[happening.person]
            switch happening.kind {
            case .deletion:
                states[happening.person].counts[happening.shortcut] = nil
                states[happening.person].last[happening.shortcut] = nil
            case .donation:
                let state = states[happening.person]
                let candidates = state.counts.keys.sorted()
                let scored = candidates.contains(happening.shortcut) && happening.wallMillis >= population.start + Self.warmUp
                if scored {
                    let device = person.devices[happening.device]
                    let firstWeek = happening.device > 0 && device.joinedAt > population.start
                        && happening.wallMillis - device.joinedAt < 7 * 24 * 3_600_000
                    let target = person.shortcuts[happening.shortcut].id
                    func rank(_ ranking: [Int]) -> Int? {
                        ranking.prefix(5).firstIndex(of: happening.shortcut).map { $0 + 1 }
                    }
                    let service = try await ask(happening)
                    board.record(.service, rank: service.prefix(5).firstIndex(of: target).map { $0 + 1 },
                                 firstWeek: firstWeek, mainDevice: happening.device == 0)
                    let id = { (s: Int) in person.shortcuts[s].id }
                    let frequent = candidates.sorted { (state.counts[$0]!, id($1)) > (state.counts[$1]!, id($0)) }
                    board.record(.mostFrequent, rank: rank(frequent), firstWeek: firstWeek, mainDevice: happening.device == 0)
                    let recent = candidates.sorted { (state.last[$0]!, id($1)) > (state.last[$1]!, id($0)) }
                    board.record(.mostRecent, rank: rank(recent), firstWeek: firstWeek, mainDevice: happening.device == 0)
                    let rates = Dictionary(uniqueKeysWithValues: candidates.map {
                        ($0, person.trueRate(shortcut: $0, device: happening.device, at: happening.wallMillis))
                    })
                    let oracle = candidates.sorted { (rates[$0]!, id($1)) > (rates[$1]!, id($0)) }
                    board.record(.oracle, rank: rank(oracle), firstWeek: firstWeek, mainDevice: happening.device == 0)
                    if ranksByTimeOracle, person.places != nil {
                        let byTime = Dictionary(uniqueKeysWithValues: candidates.map {
                            ($0, person.trueRateByTime(shortcut: $0, device: happening.device, at: happening.wallMillis))
                        })
                        let oracleByTime = candidates.sorted { (byTime[$0]!, id($1)) > (byTime[$1]!, id($0)) }
                        board.record(.oracleByTime, rank: rank(oracleByTime), firstWeek: firstWeek, mainDevice: happening.device == 0)
                    }
                }
                states[happening.person].counts[happening.shortcut, default: 0] += 1
                states[happening.person].last[happening.shortcut] = happening.wallMillis
            }
            try await tell(happening)
        }
        return board
    }
}
