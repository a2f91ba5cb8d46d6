import Foundation
import ShortcutSyncDomain

/// What an export of a compacted account carries beside its events (issue 58): its horizon and
/// its snapshot's rows (`snapshot.*`, where its folds start). A row is the JSON object of its
/// columns as PostgreSQL writes it (`row_to_json`: bytea as `"\\x…"` hex, arrays as arrays, jsonb
/// as it is), which PostgreSQL reads back into the same columns exactly.
public struct ArchivedSnapshot: Sendable, Hashable {
    /// One row of a snapshot table, as its line of the file holds it.
    public struct Row: Sendable, Hashable {
        /// The table's name, one of `ArchivedSnapshot.tables` (in schema `snapshot`).
        public var table: String
        /// The whole line; the row is its `row` member, read by PostgreSQL (so that no number or
        /// string of it passes through another JSON reader on its way).
        public var text: String
        /// The row's column names, as the file gives them.
        public var columns: Set<String>
        /// The line of the file it came from.
        public var line: Int

        public init(table: String, text: String, columns: Set<String>, line: Int) {
            self.table = table
            self.text = text
            self.columns = columns
            self.line = line
        }
    }

    public var horizon: AccountHorizon
    /// The line of the file that gave the horizon.
    public var line: Int
    public var rows: [Row]
    /// What recognises a retry of each event compacted away (`RetryFingerprints`), every row
    /// checked: of a device of the file, its seqs within an event's, no two of a device overlapping.
    public var retryFingerprints: [RetryFingerprints]

    public init(horizon: AccountHorizon, line: Int, rows: [Row], retryFingerprints: [RetryFingerprints] = []) {
        self.horizon = horizon
        self.line = line
        self.rows = rows
        self.retryFingerprints = retryFingerprints
    }

    /// The snapshot's tables, in the order an export writes them.
    public static var tables: [String] { ProjectionTables.names }
}
