import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// An account's head as a fold read saw it (DESIGN §6), with the pushing device's last seq.
struct AccountHead: Sendable, Hashable {
    var version: Int64
    var foldedVersion: Int64
    var deviceLastSeq: Int64
    /// Which write of the head row this is: the row's `xmin` (the transaction that wrote it) and
    /// its promotions (how many times a rebuild's promotion swapped the account's rows, migration
    /// 0024), as text (`markSQL`). Every write of an account's rows writes its head in the same
    /// transaction, also those that leave its versions as they were (a maintenance fold or refold,
    /// a rebuild's promotion, which also counts itself): an unchanged mark is an unchanged
    /// account, where unchanged versions are not (`FoldReadCache`).
    var mark: String

    /// The mark of the head row `h`, as the push's read returns it and its write checks it and
    /// returns it anew (`FoldReadStatement`, `AppendFoldedStatement`, `PushWriteFunction`).
    static let markSQL = "h.xmin::text || '/' || h.promotions::text"
}
