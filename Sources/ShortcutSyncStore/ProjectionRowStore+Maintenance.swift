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
    public func takeAccountBehind(on connection: PostgresConnection) async throws -> AccountBehind? {
        // Cross-account: the maintenance queue, through the partial index account_heads_behind.
        let rows = try await connection.guardedQuery("""
            SELECT h.account_id, h.version, h.folded_version FROM account_heads h
            WHERE h.folded_version < h.version
              AND NOT EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = h.account_id AND p.retry_at > now())
            LIMIT 1
            FOR UPDATE OF h SKIP LOCKED
            """, logger: logger)
        return try await rows.decode((UUID, Int64, Int64).self).collectAll().first.map {
            AccountBehind(accountId: $0.0, version: $0.1, foldedVersion: $0.2)
        }
    }

    /// Records, in the caller's transaction (which holds the head), how far the account is folded.
    public func setFolded(_ account: UUID, version: Int64, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery(
            "UPDATE account_heads SET folded_version = \(version) WHERE account_id = \(account)", logger: logger)
    }
}
