import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct EventsReport: AdminReport {
    public var events: [EventRow]
    /// More events match after this page (DESIGN §7: a page says when more follow).
    public var more = false
    /// When `more`: the account version to pass as `--after` for the next page (the page's last event's).
    public var nextAfter: Int64?
    /// A compacted account's horizon: the events listed start after it.
    public var compacted: CompactedHistory?

    /// The header of `--follow`, whose lines come one by one: fixed widths instead of a table's.
    public static var followHeader: String {
        fixed(EventRow.columns.map(\.title)) + "\n"
    }

    /// One event of `--follow`.
    public static func line(_ row: EventRow) -> String {
        fixed(row.cells) + "\n"
    }

    private static let widths = [9, 19, 8, 6, 20]

    private static func fixed(_ cells: [String]) -> String {
        var line = ""
        for (index, cell) in cells.enumerated() {
            guard index < widths.count else { line += TextTable.shorten(cell, to: 80); break }
            let value = TextTable.shorten(cell, to: widths[index])
            let padding = String(repeating: " ", count: widths[index] - value.count)
            line += (EventRow.columns[index].alignRight ? padding + value : value + padding) + "  "
        }
        return line.trimmingTrailingSpaces
    }

    public var text: String {
        var table = TextTable(EventRow.columns)
        for event in events { table.append(event.cells) }
        let rendered = (compacted?.line ?? "") + table.rendered
        guard more, let nextAfter else { return rendered }
        return rendered + "more events follow: --after \(nextAfter)\n"
    }
}
