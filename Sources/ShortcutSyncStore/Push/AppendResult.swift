import Foundation
import ShortcutSyncDomain

/// The outcome of an accepted append.
public struct AppendResult: Sendable, Hashable {
    /// The device's greatest accepted seq after the append.
    public var lastAcceptedSeq: Int64
    /// The account's version after the append: a pull that waits for it sees the whole batch.
    public var version: Int64
    /// How many events were new (the rest were retries of accepted ones).
    public var appended: Int
    /// Whether the account's projections include the batch: true unless the account is behind
    /// (an import, a parked account), when the maintenance tasks fold it.
    public var folded: Bool
    /// Whether it was folded over the rows this process kept from the account's last pushes,
    /// without reading them (`FoldReadCache`).
    public var overKeptRows: Bool

    public init(lastAcceptedSeq: Int64, version: Int64, appended: Int, folded: Bool, overKeptRows: Bool = false) {
        self.lastAcceptedSeq = lastAcceptedSeq
        self.version = version
        self.appended = appended
        self.folded = folded
        self.overKeptRows = overKeptRows
    }
}
