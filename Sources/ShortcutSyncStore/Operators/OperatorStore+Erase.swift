import Foundation
import PostgresNIO

/// What an erasure removed.
public struct ErasureCounts: Sendable, Hashable, Codable {
    public var events: Int64 = 0
    public var projectionRows: Int64 = 0
    public var devices: Int64 = 0
    public var accounts: Int64 = 0
}

extension OperatorStore {
    /// Removes everything of one account in one transaction: its events (through the append-only
    /// trigger's erasure switch), its head, its live and rebuilt projection and fold rows, its
    /// parking, its devices, their tokens and push tokens, and the account and its token; its streams and
    /// waiting pulls end on every server when it commits (`AccountErased`).
    ///
    /// It locks the account's head first, so a push or a maintenance fold of the account in flight
    /// commits before it (and its rows are removed here). A rebuild that read the account before
    /// drops its rows when it catches up (`ProjectionStore.dropErasedAccounts`).
    public func erase(account: UUID) async throws -> ErasureCounts {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                try await connection.guardedQuery(
                    "SELECT 1 FROM account_heads WHERE account_id = \(account) FOR UPDATE", logger: logger).drain()
                try await connection.guardedQuery("SET LOCAL shortcut_sync.erasure = 'on'", logger: logger)
                var counts = ErasureCounts()
                counts.events = try await deleteRows(of: account, from: "events", on: connection)
                for tables in [ProjectionTables.live, .rebuild, .snapshot] {
                    for table in ProjectionTables.names {
                        counts.projectionRows += try await deleteRows(of: account, from: tables.prefix + table, on: connection)
                    }
                }
                counts.projectionRows += try await deleteRows(of: account, from: "projection_parked_accounts", on: connection)
                _ = try await deleteRows(of: account, from: "account_heads", on: connection)
                _ = try await deleteRows(of: account, from: "push_tokens", on: connection)
                _ = try await deleteRows(of: account, from: "device_sync", on: connection)
                _ = try await deleteRows(of: account, from: "retry_fingerprints", on: connection)
                counts.devices = try await deleteRows(of: account, from: "devices", on: connection)
                counts.accounts = try await deleteRows(of: account, from: "accounts", on: connection)
                // Delivered when the erasure commits: every server ends the account's streams.
                try await connection.guardedQuery(
                    "SELECT pg_notify(\(AccountErased.channel), json_build_object('accountId', \(account)::uuid)::text)::text",
                    logger: logger)
                return counts
            }
        }
    }

    /// Deletes the account's rows of `table`, in the erasure's transaction; returns how many.
    private func deleteRows(of account: UUID, from table: String, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.guardedQuery("""
            WITH gone AS (DELETE FROM \(unescaped: table) WHERE account_id = \(account) RETURNING 1)
            SELECT count(*) FROM gone
            """, logger: logger)
        return try await rows.decode(Int64.self).collectAll().first ?? 0
    }
}
