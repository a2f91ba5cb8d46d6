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
    ///
    /// Transaction ids are handed out again after a failover to a standby that lacked the last
    /// commits (or a point-in-time recovery): a head the new timeline writes can have the
    /// `xmin` and versions of one a process kept from the lost timeline. The mark also holds the
    /// head's history (migration 0027, a random value each version-assigning push draws), which
    /// the new timeline cannot give again, so that such rows are read, never folded over.
    var mark: String

    /// The mark of the head row `h`, as the push's read returns it and its write checks it and
    /// returns it anew (`FoldReadStatement`, `AppendFoldedStatement`, `PushWriteFunction`).
    static let markSQL = "h.xmin::text || '/' || h.promotions::text || '/' || h.history::text"
}
