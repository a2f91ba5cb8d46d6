import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// An account whose projections are behind its head, taken by a maintenance task.
public struct AccountBehind: Sendable, Hashable {
    public var accountId: UUID
    public var version: Int64
    public var foldedVersion: Int64
    /// Whether a migration asked for its rows to be folded again from its first event (`refold`).
    public var refoldPending: Bool = false
}

extension ProjectionRowStore {
    /// Takes one account whose folded version is behind its head, or that a migration marked to
    /// refold (and that is not parked, or whose next try is due), locking its head until the
    /// caller's transaction ends: its pushes wait, and no other task or process takes it
    /// (`SKIP LOCKED`). Nil when there is none. Accounts behind come first: their views lag.
    ///
    /// Two statements, so that it runs on Citus as on one PostgreSQL: Citus locks rows
    /// (`FOR UPDATE`) only in a statement that reaches a single shard. A plain read of up to
    /// `candidates` accounts (every shard, no lock, those behind first), then, in a random order,
    /// a lock of one of them by its account id (one shard, `SKIP LOCKED`, the condition checked
    /// again: it may have been folded or parked since the read). Nil also when every candidate
    /// read is held by another task: with fewer tasks folding at once than `candidates`, never
    /// while another account waits.
    public func takeAccountBehind(on connection: PostgresConnection, candidates: Int = 32) async throws -> AccountBehind? {
        // Cross-account: the maintenance queue, through the partial indexes account_heads_behind_flag and account_heads_refold.
        let waiting = try await connection.guardedQuery("""
            SELECT h.account_id FROM account_heads h
            WHERE (h.behind OR h.refold_pending)
              AND NOT EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = h.account_id AND p.retry_at > now())
            ORDER BY h.behind DESC
            LIMIT \(candidates)
            """, logger: logger).decode(UUID.self).collectAll()
        for account in waiting.shuffled() {
            let rows = try await connection.guardedQuery("""
                SELECT h.account_id, h.version, h.folded_version, h.refold_pending FROM account_heads h
                WHERE h.account_id = \(account) AND (h.folded_version < h.version OR h.refold_pending)
                  AND NOT EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = \(account) AND p.retry_at > now())
                FOR UPDATE OF h SKIP LOCKED
                """, logger: logger)
            if let taken = try await rows.decode((UUID, Int64, Int64, Bool).self).collectAll().first {
                return AccountBehind(accountId: taken.0, version: taken.1, foldedVersion: taken.2, refoldPending: taken.3)
            }
        }
        return nil
    }

    /// Records, in the caller's transaction (which holds the head), how far the account is folded
    /// (and, after `refold`, that it needs no refold any more).
    public func setFolded(_ account: UUID, version: Int64, refolded: Bool = false, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("""
            UPDATE account_heads SET folded_version = \(version), refold_pending = refold_pending AND NOT \(refolded)
            WHERE account_id = \(account)
            """, logger: logger)
    }

    /// Folds the account again from its first event (`events`: its whole log, versions 1 to its
    /// head), in the caller's transaction on `connection`, which holds its head: for accounts a
    /// migration marked, whose rows lack what the fold now derives (DESIGN §6). The fold's own
    /// rows (donation groups, deletion marks) are replaced by the refold's. The views' rows are
    /// written over with the refold's, and a row the refold does not write (a tombstone, an item
    /// donated and deleted before the refold's end) stays, so that a device's cursor still finds
    /// every removal it has not seen; the views equal the fold's of the whole log, as before.
    @discardableResult
    public func refold(account: UUID, events: [FoldEvent], on connection: PostgresConnection) async throws -> AccountBatchResult {
        precondition(tables == .live, "a refold is of the live projections")
        try await connection.guardedQuery("DELETE FROM projection_donation_groups WHERE account_id = \(account)", logger: logger)
        try await connection.guardedQuery("DELETE FROM projection_deletion_marks WHERE account_id = \(account)", logger: logger)
        let batch = AccountBatch(events: events, foldedVersion: 0)
        let needs = FoldNeeds(events: events)
        let result = try await fold(account: account, batch: batch, needs: needs, stored: AccountFoldRows(), on: connection)
        try await write(account: account, result, on: connection)
        return result
    }
}
