import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension OperatorStore {
    /// The account's horizon (`ProjectionStore.compact`): nil when its history was never compacted.
    public func horizon(of account: UUID) async throws -> AccountHorizon? {
        try await client.withConnection { try await horizon(of: account, on: $0) }
    }

    /// `horizon(of:)` on `connection`, in its transaction.
    func horizon(of account: UUID, on connection: PostgresConnection) async throws -> AccountHorizon? {
        let rows = try await connection.guardedQuery("""
            SELECT horizon FROM projection_accounts WHERE account_id = \(account) AND horizon IS NOT NULL
            """, logger: logger)
        return try await rows.decode(ByteBuffer.self).collectAll().first.map(CompactionColumns.horizon(stored:))
    }
}
