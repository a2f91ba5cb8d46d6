import Foundation

/// How the scoring did, offline, on one population shape.
public struct PopulationBoard: Sendable, Codable {
    public var shape: PopulationShape
    public var happenings: Int
    public var board: SuggestionScoreboard

    /// The service's Hit@1 and Hit@4 beside the oracle's, and the first-week devices' Hit@4 as a
    /// share of the main devices', one population a row.
    static func table(_ boards: [PopulationBoard]) -> String {
        func percent(_ value: Double) -> String { String(format: "%.1f", value * 100) }
        var lines = ["| population | happenings | Hit@1 | oracle | gap | Hit@4 | oracle | gap | within 8 of the oracle | first-week Hit@4 / main |",
                     "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for entry in boards {
            let service = entry.board.all[.service] ?? SuggestionScoreboard.Tally(), oracle = entry.board.all[.oracle] ?? SuggestionScoreboard.Tally()
            let gap1 = oracle.hitAt1 - service.hitAt1, gap4 = oracle.hitAt4 - service.hitAt4
            let first = entry.board.firstWeek[.service], main = entry.board.mainDevice[.service]
            let firstWeek = first.flatMap { first in main.map { main in (first, main) } }.map { first, main in
                main.hitAt4 > 0 ? String(format: "%.1f %% (%d scored)", first.hitAt4 / main.hitAt4 * 100, first.scored) : "—"
            } ?? "— (no device joined late)"
            lines.append("| \(entry.shape.name) | \(entry.happenings) | \(percent(service.hitAt1)) | \(percent(oracle.hitAt1)) | \(percent(gap1)) | "
                + "\(percent(service.hitAt4)) | \(percent(oracle.hitAt4)) | \(percent(gap4)) | "
                + "\(gap1 <= 0.08 && gap4 <= 0.08 ? "met" : "**not met**") | \(firstWeek) |")
        }
        return lines.joined(separator: "\n")
    }
}
