import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// A parked account: the maintenance tasks try its fold again after a growing pause; meanwhile
/// its pushes are stored but not folded.
public struct ParkedAccount: Sendable, Hashable {
    public var accountId: UUID
    /// The account version at which its fold failed.
    public var failedVersion: Int64
    public var error: String
    public var attempts: Int
}

extension ProjectionRowStore {
    /// The accounts whose events the live fold skips.
    public func parkedAccounts(on connection: PostgresConnection) async throws -> Set<UUID> {
        let rows = try await connection.guardedQuery("SELECT account_id FROM projection_parked_accounts", logger: logger)
        return Set(try await rows.decode(UUID.self).collectAll())
    }

    /// Parks an account, in the caller's transaction: its fold failed at `version`. Its next try
    /// is due after `retry.first`, doubled with each further failure up to `retry.longest`.
    public func park(
        _ account: UUID, version: Int64, error: String, retry: (first: Duration, longest: Duration) = (.seconds(1), .seconds(300)),
        on connection: PostgresConnection
    ) async throws {
        let first = retry.first.inMilliseconds, longest = retry.longest.inMilliseconds
        try await connection.guardedQuery("""
            INSERT INTO projection_parked_accounts AS p (account_id, failed_version, error, retry_at)
            VALUES (\(account), \(version), \(error), now() + \(first) * interval '1 millisecond')
            ON CONFLICT (account_id) DO UPDATE SET
                attempts = p.attempts + 1, error = excluded.error, failed_version = excluded.failed_version,
                retry_at = now() + least(\(first) * power(2, least(p.attempts, 30)), \(longest)) * interval '1 millisecond'
            """, logger: logger)
    }

    /// Unparks an account whose fold went through, in the caller's transaction.
    public func unpark(_ account: UUID, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("DELETE FROM projection_parked_accounts WHERE account_id = \(account)", logger: logger)
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
