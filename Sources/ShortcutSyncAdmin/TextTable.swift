import Foundation
import ShortcutSyncDomain

/// An aligned text table for people: a header, a rule, the rows; values wider than a column's
/// limit are shortened with "…", numbers are right-aligned.
public struct TextTable: Sendable {
    public struct Column: Sendable {
        public var title: String
        public var maxWidth: Int
        public var alignRight: Bool

        public init(_ title: String, maxWidth: Int = 40, alignRight: Bool = false) {
            self.title = title
            self.maxWidth = maxWidth
            self.alignRight = alignRight
        }
    }

    public var columns: [Column]
    public private(set) var rows: [[String]] = []

    public init(_ columns: [Column]) {
        self.columns = columns
    }

    public mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a row of \(row.count) values for \(columns.count) columns")
        rows.append(row)
    }

    public var rendered: String {
        let cells = ([columns.map(\.title)] + rows).map { row in
            zip(row, columns).map { Self.shorten($0, to: $1.maxWidth) }
        }
        let widths = columns.indices.map { index in cells.map { $0[index].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            zip(row, columns.indices).map { value, index in
                let padding = String(repeating: " ", count: widths[index] - value.count)
                return columns[index].alignRight ? padding + value : value + padding
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        var lines = [line(cells[0]), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        lines += cells.dropFirst().map(line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `value` cut to `width` characters, ending in "…" when cut; line breaks shown as spaces, and
    /// every other control character escaped (`\u{1B}`): what a client wrote may not drive the
    /// operator's terminal, and the widths count what is shown.
    static func shorten(_ value: String, to width: Int) -> String {
        let flat = ControlCharacters.escaped(value.replacingOccurrences(of: "\n", with: " "))
        guard flat.count > width, width > 1 else { return flat }
        return String(flat.prefix(width - 1)) + "…"
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
