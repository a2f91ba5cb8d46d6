import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The projections in PostgreSQL as pulls and operators read them (the worker folds them, through
/// `ProjectionRowStore`).
///
/// Items have one row per account, whatever the number of devices; a pull makes them visible to
/// the device's installed apps. Every changed row carries the account version that changed it
/// and a removed item stays as a tombstone, so a pull with a cursor reads exactly the rows above
/// the cursor's version, in pages of at most `pullPageSize` rows (`ProjectionStore+Pull.swift`).
public struct ProjectionStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// The most items (rows) one pull answers: `defaultPullPageSize` but in tests.
    public let pullPageSize: Int

    public init(client: PostgresClient, logger: Logger, pullPageSize: Int = Self.defaultPullPageSize) {
        precondition((1...100_000).contains(pullPageSize), "a pull's page size must be 1 to 100,000, not \(pullPageSize)")
        self.client = client
        self.logger = logger
        self.pullPageSize = pullPageSize
    }

    /// Where the live projections stand.
    public func checkpoint() async throws -> ProjectionCheckpoint {
        try await ProjectionRowStore(tables: .live, logger: logger).checkpoint(client)
    }

    /// Whether the account's views include log `position`: true unless the account has a
    /// committed event there that the projections have not folded yet. A position of another
    /// account, or of none, is included: there is nothing of this account to wait for.
    public func isProcessed(position: Int64, account: UUID) async throws -> Bool {
        guard position > 0 else { return true }
        return try await client.query("""
            SELECT NOT EXISTS (
                SELECT 1 FROM events e, projection_checkpoint c
                WHERE e.account_id = \(account) AND e.position = \(position) AND c.name = 'live'
                  AND (e.tx_id, e.position) > (c.tx_id, c.position))
            """, logger: logger).decode(Bool.self).collectAll().first ?? false
    }

    /// Where the worker stands, for `/readyz` and `admin projections status`: the checkpoint, the
    /// log's greatest position (committed or not), how many committed events wait to be folded,
    /// and how many accounts are parked (their events skipped until they fold again).
    public func status() async throws -> (checkpoint: ProjectionCheckpoint, headPosition: Int64, pendingEvents: Int64, parkedAccounts: Int64) {
        let rows = try await client.query("""
            SELECT c.tx_id::text::int8, c.position, c.epoch,
                   (SELECT coalesce(max(position), 0) FROM events),
                   (SELECT count(*) FROM events e WHERE (e.tx_id, e.position) > (c.tx_id, c.position)),
                   (SELECT count(*) FROM projection_parked_accounts)
            FROM projection_checkpoint c WHERE c.name = 'live'
            """, logger: logger)
        for try await (txid, position, epoch, head, pending, parked) in rows.decode((Int64, Int64, Int64, Int64, Int64, Int64).self) {
            let checkpoint = ProjectionCheckpoint(log: LogCheckpoint(transactionID: UInt64(txid), position: position), epoch: epoch)
            return (checkpoint: checkpoint, headPosition: head, pendingEvents: pending, parkedAccounts: parked)
        }
        throw StoreError.corruptRow("the live projection checkpoint is missing")
    }

    /// The greatest log position, committed or not: the head the worker's lag is measured against.
    public func headPosition() async throws -> Int64 {
        try await client.query("SELECT coalesce(max(position), 0) FROM events", logger: logger)
            .decode(Int64.self).collectAll().first ?? 0
    }

    /// The account's whole view as the live projections hold it (every app's items,
    /// `appInstalled` true), read in one snapshot.
    public func accountView(account: UUID) async throws -> DeviceView {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                DeviceView.empty.applying(try await allRows(account: account, on: connection))
            }
        }
    }
}

extension JSONDecoder {
    /// Decodes a stored view, naming the row kind when it cannot.
    func decodeView<View: Decodable>(_ type: View.Type, _ json: String) throws -> View {
        do {
            return try decode(type, from: Data(json.utf8))
        } catch {
            throw StoreError.corruptRow("a stored \(View.self) cannot be decoded: \(error)")
        }
    }
}
