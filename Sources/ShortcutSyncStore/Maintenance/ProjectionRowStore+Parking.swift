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
    /// Parks an account, in the caller's transaction: its fold failed at `version`. Its next try
    /// is due after `retry.first`, doubled with each further failure up to `retry.longest`.
    public func park(
        _ account: UUID, version: Int64, error: String, retry: (first: Duration, longest: Duration) = (.seconds(1), .seconds(300)),
        on connection: PostgresConnection
    ) async throws {
        // The attempts so far are read first (the caller holds the account's head, so nothing
        // parks it meanwhile) and the next try's time is computed in VALUES, where `now()` is
        // taken once: Citus refuses any function but IMMUTABLE ones in the DO UPDATE SET of an
        // INSERT into a distributed table, so that clause only copies `excluded`.
        let attempts = try await connection.guardedQuery(
            "SELECT attempts FROM projection_parked_accounts WHERE account_id = \(account)", logger: logger
        ).decode(Int.self).collectAll().first ?? 0
        let first = retry.first.inMilliseconds, longest = retry.longest.inMilliseconds
        let pause = min(Double(first) * pow(2, Double(min(attempts, 30))), Double(longest))
        try await connection.guardedQuery("""
            INSERT INTO projection_parked_accounts AS p (account_id, failed_version, error, attempts, retry_at)
            VALUES (\(account), \(version), \(error), \(attempts + 1), now() + \(pause) * interval '1 millisecond')
            ON CONFLICT (account_id) DO UPDATE SET
                attempts = excluded.attempts, error = excluded.error, failed_version = excluded.failed_version,
                retry_at = excluded.retry_at
            """, logger: logger)
    }

    /// Unparks an account whose fold went through, in the caller's transaction.
    public func unpark(_ account: UUID, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("DELETE FROM projection_parked_accounts WHERE account_id = \(account)", logger: logger)
    }
}
