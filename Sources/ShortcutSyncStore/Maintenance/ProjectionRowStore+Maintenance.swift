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
    /// Statements that run on Citus as on one PostgreSQL: Citus locks rows (`FOR NO KEY UPDATE`)
    /// only in a statement that reaches a single shard. A plain read of up to `candidates`
    /// accounts (every shard, no lock, those behind first), then, in a random order, a lock of one
    /// of them by its account id (`SKIP LOCKED`, the condition checked again: it may have been
    /// folded since the read) and, once held, whether it was parked since the read; each of these
    /// two is a statement of one table naming the account, a fast-path router statement on Citus
    /// (a `NOT EXISTS` of the parked table in the lock made it a router plan, planned anew each
    /// time). An account parked between the read and the lock (by another task, in the few
    /// milliseconds between them) stays held to the end of the caller's transaction, its pushes
    /// waiting that long, and is not taken. Nil also when every candidate read is held by another
    /// task: with fewer tasks folding at once than `candidates`, never while another account waits.
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
                FOR NO KEY UPDATE OF h SKIP LOCKED
                """, logger: logger)
            guard let taken = try await rows.decode((UUID, Int64, Int64, Bool).self).collectAll().first else { continue }
            // Parking takes the head first, so with it held the answer stays true to the step's end.
            let parked = try await connection.guardedQuery("""
                SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = \(account) AND p.retry_at > now()
                """, logger: logger).collectAll()
            if parked.isEmpty {
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
    ///
    /// A compacted account (one with a snapshot) is folded again from its snapshot: its groups,
    /// marks and account row become the snapshot's, and the events after its horizon are folded
    /// over the snapshot's rows (the events kept at or below it, which are partial, are not).
    @discardableResult
    public func refold(account: UUID, events: [FoldEvent], on connection: PostgresConnection) async throws -> AccountBatchResult {
        precondition(tables == .live, "a refold is of the live projections")
        try await connection.guardedQuery("DELETE FROM projection_donation_groups WHERE account_id = \(account)", logger: logger)
        try await connection.guardedQuery("DELETE FROM projection_deletion_marks WHERE account_id = \(account)", logger: logger)
        if let horizon = try await snapshotHorizon(of: account, on: connection) {
            return try await refold(account: account, events: events.filter { $0.version > horizon }, after: horizon, on: connection)
        }
        let batch = AccountBatch(events: events, foldedVersion: 0)
        let needs = FoldNeeds(events: events)
        let result = try await fold(account: account, batch: batch, needs: needs, stored: AccountFoldRows(), on: connection)
        try await write(account: account, result, on: connection)
        return result
    }

    /// The horizon version of the account's snapshot, nil when it has none.
    private func snapshotHorizon(of account: UUID, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.guardedQuery("""
            SELECT horizon FROM snapshot.projection_accounts WHERE account_id = \(account) AND horizon IS NOT NULL
            """, logger: logger)
        return try await rows.decode(ByteBuffer.self).collectAll().first.map { try CompactionColumns.horizon(stored: $0).version }
    }

    /// `refold` of a compacted account, whose groups and marks were just removed: the snapshot's
    /// groups, marks and account row copied to the live tables, then `events` (those after the
    /// horizon) folded over the snapshot's rows and written.
    private func refold(account: UUID, events: [FoldEvent], after horizon: Int64, on connection: PostgresConnection) async throws -> AccountBatchResult {
        try await connection.guardedQuery("DELETE FROM projection_accounts WHERE account_id = \(account)", logger: logger)
        try await connection.guardedQuery("""
            INSERT INTO projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter, learning, forgets_shortcuts, shortcut_count, horizon)
            SELECT \(account), version, max_hlc_wall, max_hlc_counter, learning, forgets_shortcuts, shortcut_count, horizon
            FROM snapshot.projection_accounts WHERE account_id = \(account)
            """, logger: logger)
        try await connection.guardedQuery("""
            INSERT INTO projection_donation_groups (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version,
                                                    covered_below, habits, compacted)
            SELECT \(account), bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below, habits, compacted
            FROM snapshot.projection_donation_groups WHERE account_id = \(account)
            """, logger: logger)
        try await connection.guardedQuery("""
            INSERT INTO projection_deletion_marks (account_id, bundle_id, scope, value, key)
            SELECT \(account), bundle_id, scope, value, key FROM snapshot.projection_deletion_marks WHERE account_id = \(account)
            """, logger: logger)
        let snapshot = ProjectionRowStore(tables: .snapshot, logger: logger)
        let needs = FoldNeeds(events: events)
        let stored = try await snapshot.read(account: account, needs: needs, on: connection)
        let result = try await fold(account: account, batch: AccountBatch(events: events, foldedVersion: horizon), needs: needs,
                                    stored: stored, on: connection)
        try await write(account: account, result, on: connection)
        return result
    }
}
