import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One page of a device's pull (DESIGN §5), read from one consistent snapshot.
public struct PullSnapshot: Sendable {
    /// The epoch, the device's apps version and the account version this answer brings the
    /// device to, and where it stopped when `more`.
    public var cursor: PullCursor
    /// True when `changes` begin the whole view, to replace what the device holds.
    public var reset: Bool
    /// True when the answer stopped at its page size: pull again with `cursor` at once.
    public var more: Bool
    public var changes: ViewChanges
    /// The greatest hlc the account has seen (zero if none), for the device's clock.
    public var maxHLC: HLCTimestamp
    /// The device's greatest accepted seq.
    public var lastAcceptedSeq: Int64
}
