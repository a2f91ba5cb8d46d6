import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// An account whose projections are behind its head, taken by a maintenance task.
public struct AccountBehind: Sendable, Hashable {
    public var accountId: UUID
    public var version: Int64
    public var foldedVersion: Int64
}

extension ProjectionRowStore {
    /// Takes one account whose folded version is behind its head (and that is not parked, or
    /// whose next try is due), locking its head until the caller's transaction ends: its pushes
    /// wait, and no other task or process takes it (`SKIP LOCKED`). Nil when there is none.
    ///
    /// Two statements, so that it runs on Citus as on one PostgreSQL: Citus locks rows
    /// (`FOR UPDATE`) only in a statement that reaches a single shard. A plain read of up to
    /// `candidates` accounts behind (every shard, no lock), then, in a random order, a lock of
    /// one of them by its account id (one shard, `SKIP LOCKED`, the condition checked again: it
    /// may have been folded or parked since the read). Nil also when every candidate read is held
    /// by another task: with fewer tasks folding at once than `candidates`, never while another
    /// account is behind.
    public func takeAccountBehind(on connection: PostgresConnection, candidates: Int = 32) async throws -> AccountBehind? {
        // Cross-account: the maintenance queue, through the partial index account_heads_behind.
        let behind = try await connection.guardedQuery("""
            SELECT h.account_id FROM account_heads h
            WHERE h.folded_version < h.version
              AND NOT EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = h.account_id AND p.retry_at > now())
            LIMIT \(candidates)
            """, logger: logger).decode(UUID.self).collectAll()
        for account in behind.shuffled() {
            let rows = try await connection.guardedQuery("""
                SELECT h.account_id, h.version, h.folded_version FROM account_heads h
                WHERE h.account_id = \(account) AND h.folded_version < h.version
                  AND NOT EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = \(account) AND p.retry_at > now())
                FOR UPDATE OF h SKIP LOCKED
                """, logger: logger)
            if let taken = try await rows.decode((UUID, Int64, Int64).self).collectAll().first {
                return AccountBehind(accountId: taken.0, version: taken.1, foldedVersion: taken.2)
            }
        }
        return nil
    }

    /// Records, in the caller's transaction (which holds the head), how far the account is folded.
    public func setFolded(_ account: UUID, version: Int64, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery(
            "UPDATE account_heads SET folded_version = \(version) WHERE account_id = \(account)", logger: logger)
    }
}
