import Foundation
import ShortcutSyncDomain

/// An account's history as an export writes it, read in one snapshot of the database: its
/// events, and when it was compacted, its horizon and its snapshot's rows (`OperatorStore.archivedHistory`).
public struct ArchivedHistory: Sendable {
    /// The events the log holds, in version order (for a compacted account, the anchors at or
    /// below its horizon and every event after it).
    public var events: [RecordedEvent]
    /// Nil when the account was never compacted.
    public var horizon: AccountHorizon?
    /// Each row of the account's snapshot as the JSON object of its columns (`row_to_json`),
    /// table by table in `ArchivedSnapshot.tables`' order and by that text within a table.
    public var snapshotRows: [(table: String, json: String)]
    /// What recognises a retry of each event its compactions removed (migration 0029), by device and first seq.
    public var retryFingerprints: [RetryFingerprints] = []
}
