import Foundation
import ShortcutSyncDomain

/// The outcome of an accepted append.
public struct AppendResult: Sendable, Hashable {
    /// The device's greatest accepted seq after the append.
    public var lastAcceptedSeq: Int64
    /// The greatest log position among the batch's events, new or already stored:
    /// a pull that waits for it sees the whole batch.
    public var position: Int64
    /// How many events were new (the rest were retries of accepted ones).
    public var appended: Int
    /// The account stream's version after the append.
    public var streamVersion: Int64
}
