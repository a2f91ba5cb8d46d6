import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// An account's head as a fold read saw it (DESIGN §6), with the pushing device's last seq.
struct AccountHead: Sendable, Hashable {
    var version: Int64
    var foldedVersion: Int64
    var deviceLastSeq: Int64
    /// Which write of the head row this is: the row's `xmin` (the transaction that wrote it), as
    /// text. Every write of an account's rows writes its head in the same transaction, also those
    /// that leave its versions as they were (a maintenance fold or refold, a rebuild's promotion):
    /// an unchanged mark is an unchanged account, where unchanged versions are not (`FoldReadCache`).
    var mark: String
}
