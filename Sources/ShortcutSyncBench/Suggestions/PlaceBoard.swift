import Foundation

/// How the scoring did, offline, on one population with places (issue 67): the same engine with
/// the places its people's keyed devices send, and without any (time alone), beside the oracle,
/// which knows the generator's true rates by time and place.
public struct PlaceBoard: Sendable, Codable {
    public var shape: PopulationShape
    public var happenings: Int
    public var withPlaces: SuggestionScoreboard
    public var withoutPlaces: SuggestionScoreboard

    /// Issue 67's targets: Hit@1 at least 10 points above the engine without places, and within
    /// 8 points of the oracle.
    public var verdicts: [(String, Bool)] {
        let placed = withPlaces.all[.service] ?? SuggestionScoreboard.Tally()
        let timeAlone = withoutPlaces.all[.service] ?? SuggestionScoreboard.Tally()
        let oracle = withPlaces.all[.oracle] ?? SuggestionScoreboard.Tally()
        return [("Hit@1 ≥ without places + 10 points", placed.hitAt1 >= timeAlone.hitAt1 + 0.10),
                ("Hit@1 within 8 points of the oracle", placed.hitAt1 >= oracle.hitAt1 - 0.08)]
    }

    /// One population a row: Hit@1 and Hit@4 with places, without, and the oracle's; and the
    /// Hit@1 of the oracle that knows the time and not the place, whose distance to the oracle
    /// is all that knowing where could add to a ranking that knew the rates by time exactly.
    static func table(_ boards: [PlaceBoard]) -> String {
        func percent(_ value: Double) -> String { String(format: "%.1f", value * 100) }
        var lines = ["| population | happenings | Hit@1 with places | without | gain | oracle | gap | oracle by time (oracle's gain) | Hit@4 with | without | oracle | targets |",
                     "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for entry in boards {
            let placed = entry.withPlaces.all[.service] ?? SuggestionScoreboard.Tally()
            let timeAlone = entry.withoutPlaces.all[.service] ?? SuggestionScoreboard.Tally()
            let oracle = entry.withPlaces.all[.oracle] ?? SuggestionScoreboard.Tally()
            let byTime = entry.withPlaces.all[.oracleByTime] ?? SuggestionScoreboard.Tally()
            let unmet = entry.verdicts.filter { !$0.1 }.map(\.0)
            lines.append("| \(entry.shape.name) | \(entry.happenings) | \(percent(placed.hitAt1)) | \(percent(timeAlone.hitAt1)) | "
                + "\(percent(placed.hitAt1 - timeAlone.hitAt1)) | \(percent(oracle.hitAt1)) | \(percent(oracle.hitAt1 - placed.hitAt1)) | "
                + "\(percent(byTime.hitAt1)) (+\(percent(oracle.hitAt1 - byTime.hitAt1))) | "
                + "\(percent(placed.hitAt4)) | \(percent(timeAlone.hitAt4)) | \(percent(oracle.hitAt4)) | "
                + "\(unmet.isEmpty ? "met" : "**not met**: " + unmet.joined(separator: "; ")) |")
        }
        return lines.joined(separator: "\n")
    }
}
