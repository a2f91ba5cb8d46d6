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
    /// trigger's erasure switch), its live and rebuilt projection and fold rows, its parking,
    /// its devices and their tokens, and the account and its token; its streams and waiting
    /// pulls end on every server when it commits (`AccountErased`).
    ///
    /// It locks both checkpoints first, so a fold in flight commits before it (and its rows are
    /// removed here) or runs after it (and skips the account, whose events are gone).
    public func erase(account: UUID) async throws -> ErasureCounts {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                for tables in [ProjectionTables.live, .rebuild] {
                    _ = try await ProjectionRowStore(tables: tables, logger: logger).checkpoint(on: connection, forUpdate: true)
                }
                try await connection.guardedQuery("SET LOCAL shortcut_sync.erasure = 'on'", logger: logger)
                var counts = ErasureCounts()
                counts.events = try await deleteRows(of: account, from: "events", on: connection)
                for tables in [ProjectionTables.live, .rebuild] {
                    for table in ProjectionTables.names {
                        counts.projectionRows += try await deleteRows(of: account, from: tables.prefix + table, on: connection)
                    }
                }
                counts.projectionRows += try await deleteRows(of: account, from: "projection_parked_accounts", on: connection)
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

    private func deleteRows(of account: UUID, from table: String, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.guardedQuery("""
            WITH gone AS (DELETE FROM \(unescaped: table) WHERE account_id = \(account) RETURNING 1)
            SELECT count(*) FROM gone
            """, logger: logger)
        return try await rows.decode(Int64.self).collectAll().first ?? 0
    }
}
