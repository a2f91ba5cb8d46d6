import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// A parked account: its events are skipped until folding it from its whole log works again.
public struct ParkedAccount: Sendable, Hashable {
    public var accountId: UUID
    /// The log position of its first event that could not be folded.
    public var firstPosition: Int64
    public var error: String
    public var attempts: Int
}

extension ProjectionRowStore {
    /// The accounts whose events the live fold skips.
    public func parkedAccounts(on connection: PostgresConnection) async throws -> Set<UUID> {
        let rows = try await connection.guardedQuery("SELECT account_id FROM projection_parked_accounts", logger: logger)
        return Set(try await rows.decode(UUID.self).collectAll())
    }

    /// Which of `accounts` a batch must skip, read in the batch's transaction after it locked the
    /// checkpoint: those parked (live tables only), and those erased since the batch was read
    /// (their events are gone: `OperatorStore.erase` locks the checkpoint too, so a batch read
    /// before an erasure never writes the erased account's rows back after it).
    public func skippedAccounts(among accounts: some Collection<UUID>, on connection: PostgresConnection) async throws -> Set<UUID> {
        let rows = try await connection.guardedQuery("""
            SELECT a FROM unnest(\(Array(accounts))::uuid[]) AS a
            WHERE (\(tables == .live) AND a IN (SELECT account_id FROM projection_parked_accounts))
               OR NOT EXISTS (SELECT 1 FROM events e WHERE e.account_id = a)
            """, logger: logger)
        return Set(try await rows.decode(UUID.self).collectAll())
    }

    /// Parks an account, in the caller's transaction: its events from `position` on are skipped.
    public func park(_ account: UUID, position: Int64, error: String, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("""
            INSERT INTO projection_parked_accounts (account_id, first_position, error) VALUES (\(account), \(position), \(error))
            ON CONFLICT (account_id) DO NOTHING
            """, logger: logger)
    }

    /// Parked accounts whose next attempt is due.
    public func parkedAccountsDue(on connection: PostgresConnection) async throws -> [ParkedAccount] {
        let rows = try await connection.guardedQuery("""
            SELECT account_id, first_position, error, attempts FROM projection_parked_accounts
            WHERE retry_at <= now() ORDER BY retry_at
            """, logger: logger)
        return try await rows.decode((UUID, Int64, String, Int32).self).collectAll().map {
            ParkedAccount(accountId: $0.0, firstPosition: $0.1, error: $0.2, attempts: Int($0.3))
        }
    }

    /// Records a failed attempt and when to try again.
    public func deferParked(_ account: UUID, error: String, retryIn delay: Duration, on connection: PostgresConnection) async throws {
        let milliseconds = delay.inMilliseconds
        try await connection.guardedQuery("""
            UPDATE projection_parked_accounts
            SET attempts = attempts + 1, error = \(error), retry_at = now() + \(milliseconds) * interval '1 millisecond'
            WHERE account_id = \(account)
            """, logger: logger)
    }

    /// Removes every projected and fold row of one account but its version, and unparks it, in
    /// the caller's transaction: its rows are about to be written anew from its whole log.
    /// Returns the account's version, which the rows written next must pass.
    public func clearAccount(_ account: UUID, on connection: PostgresConnection) async throws -> Int64 {
        let p = tables.prefix
        for table in ProjectionTables.names where table != "projection_accounts" {
            try await connection.guardedQuery("DELETE FROM \(unescaped: p)\(unescaped: table) WHERE account_id = \(account)", logger: logger)
        }
        try await connection.guardedQuery("DELETE FROM projection_parked_accounts WHERE account_id = \(account)", logger: logger)
        let rows = try await connection.guardedQuery(
            "SELECT version FROM \(unescaped: p)projection_accounts WHERE account_id = \(account)", logger: logger)
        return try await rows.decode(Int64.self).collectAll().first ?? 0
    }

    /// Cursors of the account made before `version` get the whole view.
    public func resetCursors(of account: UUID, before version: Int64, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery(
            "UPDATE \(unescaped: tables.prefix)projection_accounts SET reset_version = \(version) WHERE account_id = \(account)",
            logger: logger)
    }
}

extension PostgresEventStore {
    /// Every event of one account up to `checkpoint`, in its stream order, read on `connection`.
    public func readFoldLog(ofAccount account: UUID, through checkpoint: LogCheckpoint, on connection: PostgresConnection) async throws -> [FoldLogEntry] {
        let rows = try await connection.guardedQuery("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE account_id = \(account) AND (tx_id, position) <= (\(String(checkpoint.transactionID))::xid8, \(checkpoint.position))
            ORDER BY stream_version
            """, logger: logger)
        return try await FoldLogCoding().entries(rows)
    }
}
