import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import Tracing

/// The projections in PostgreSQL as pulls and operators read them (pushes and the maintenance
/// tasks fold them, through `ProjectionRowStore`).
///
/// Items have one row per account, whatever the number of devices; a pull makes them visible to
/// the device's installed apps. Every changed row carries the account version that changed it
/// and a removed item stays as a tombstone, so a pull with a cursor reads exactly the rows above
/// the cursor's version, in pages of at most `pullPageSize` rows (`ProjectionStore+Pull.swift`).
public struct ProjectionStore: Sendable, RoutedByAccount {
    public let client: PostgresClient
    public let logger: Logger
    /// The most items (rows) one pull answers: `defaultPullPageSize` but in tests.
    public let pullPageSize: Int

    /// About the most bytes of views one pull answers (`defaultPullPageBytes` but in tests).
    public let pullPageBytes: Int
    /// Whether this database is Citus: then the maintenance fold writes its rows as router
    /// statements and the common pull is one call of `pull_changes` (`PullFunction`).
    let writeRoute = PushWriteRoute()
    /// On a Citus cluster, where each account's pulls go (`AccountRouter`); nil: to `client`.
    public let router: AccountRouter?
    /// The most events a compaction reads at once (issue 65, item 1): it folds an account's
    /// history a chunk at a time, so that its memory does not grow with the history.
    public var compactionChunk = 10_000
    /// The candidates of devices' last suggestions requests, kept until their account changes
    /// (`SuggestionCandidateCache`); nil: every request reads them.
    public var suggestionCache: SuggestionCandidateCache?

    public init(client: PostgresClient, logger: Logger, pullPageSize: Int = Self.defaultPullPageSize,
                pullPageBytes: Int = Self.defaultPullPageBytes, router: AccountRouter? = nil) {
        precondition((1...100_000).contains(pullPageSize), "a pull's page size must be 1 to 100,000, not \(pullPageSize)")
        self.client = client
        self.logger = logger
        self.pullPageSize = pullPageSize
        self.pullPageBytes = pullPageBytes
        self.router = router
    }

    /// Whether the account's views include its version `version`: true once its folded version
    /// reached it. An account with no head has nothing to wait for.
    public func includes(version: Int64, account: UUID) async throws -> Bool {
        guard version > 0 else { return true }
        return try await pool(for: account).guardedQuery("""
            SELECT coalesce((SELECT folded_version >= \(version) FROM account_heads WHERE account_id = \(account)), true)
            """, logger: logger).decode(Bool.self).collectAll().first ?? true
    }

    /// The account's version and how far its projections include it (0, 0 when it has no head).
    public func head(account: UUID) async throws -> (version: Int64, folded: Int64) {
        let rows = try await pool(for: account).guardedQuery(
            "SELECT version, folded_version FROM account_heads WHERE account_id = \(account)", logger: logger)
        return try await rows.decode((Int64, Int64).self).collectAll().first.map { ($0.0, $0.1) } ?? (0, 0)
    }

    /// Where the maintenance stands, for `/readyz` and `admin projections status`: the epoch, how
    /// many accounts are behind their head and by how many events, how long the longest-waiting
    /// of them has waited for its fold is not known here (see `OperatorStore`), and how many are parked.
    public func status() async throws -> MaintenanceStatus {
        // Cross-account: the accounts behind, through the partial index account_heads_behind_flag.
        // Each count is a subquery of its own in FROM, none in the target list: Citus cannot push
        // a subquery of the target list down beside a distributed table ("cannot push down
        // subquery on the target list"); this way it counts each on every shard and joins the sums
        // with the reference table's epoch, and one PostgreSQL plans it as before.
        let rows = try await client.guardedQuery("""
            SELECT c.epoch, behind.accounts, behind.events, parked.accounts
            FROM projection_checkpoint c,
                 (SELECT count(*) AS accounts, coalesce(sum(version - folded_version), 0)::int8 AS events
                  FROM account_heads WHERE behind) behind,
                 (SELECT count(*) AS accounts FROM projection_parked_accounts) parked
            WHERE c.name = 'live'
            """, logger: logger)
        for try await (epoch, accounts, events, parked) in rows.decode((Int64, Int64, Int64, Int64).self) {
            return MaintenanceStatus(epoch: epoch, accountsBehind: accounts, eventsBehind: events, parkedAccounts: parked)
        }
        throw StoreError.corruptRow("the live projection checkpoint is missing")
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

extension ProjectionStore {
    /// Tells every server which accounts' views changed (`NOTIFY`, coalesced as few payloads
    /// as the limit allows), on a pooled connection, at once: what a server's announcer sends.
    public func announce(_ notification: ProjectionNotification) async throws {
        try await withStatementSpan("announce: notify the other servers", .notify, ProjectionNotification.channel) {
            try await client.withConnection { connection in
                try await ProjectionRowStore(tables: .live, logger: logger).notify(notification, on: connection)
            }
        }
    }
}
