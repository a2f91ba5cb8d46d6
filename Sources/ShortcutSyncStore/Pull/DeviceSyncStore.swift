import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import Tracing

/// What each device has of its account, recorded by its pulls (issue 33): for the wakes (a device
/// at its account's version needs none, DESIGN §6) and for the account's devices, which show
/// "synced to your iPad two minutes ago" (`GET /v1/devices`).
public struct DeviceSyncStore: Sendable, RoutedByAccount {
    public let client: PostgresClient
    public let logger: Logger
    /// One statement on one PostgreSQL; a distributed function's call on Citus (`recordPull`).
    private let route = PushWriteRoute()
    /// On a Citus cluster, where each account's record goes (`AccountRouter`); nil: to `client`.
    public let router: AccountRouter?

    public init(client: PostgresClient, logger: Logger, router: AccountRouter? = nil) {
        self.client = client
        self.logger = logger
        self.router = router
    }

    /// Records that the device pulled its view at `version`, `at` this moment, in one statement:
    /// its push token's pulled version (no row, no write, for a device without a token) and, when
    /// the pull was `complete` (its last page), the version the device has and when — written
    /// when the version moves on, or when the row is a minute old, so a device pulling in a loop
    /// writes little. (The times are the service's, as values: Citus takes no function but an
    /// immutable one in an ON CONFLICT's condition.)
    ///
    /// A pull may have checked its token before an erasure of its account committed (issue 56):
    /// the row is written only while the account's head exists, under a key-share lock of it,
    /// which `OperatorStore.erase` takes for update first. Either the erasure waits for this
    /// statement and removes its row, or this statement waits for the erasure and finds no head.
    /// The lock is taken only when there is something to write, so a device pulling in a loop
    /// takes none.
    ///
    /// A pull may also have checked its token before a sign-out of its device committed: the row
    /// is written only while the device is signed in, read under a share lock of the device's row
    /// taken after the head's. A sign-out takes the head `FOR UPDATE` before it revokes the token
    /// and removes the row: a record that waited reads the device again once the sign-out
    /// committed (the lock's recheck of a row updated meanwhile), finds it signed out and writes
    /// nothing, so that the signed-out device's row does not come back.
    ///
    /// On Citus the same as one call of a distributed function (`RecordPullFunction`), which
    /// Citus sends to the account's worker whole: Citus plans the one statement's data-modifying
    /// CTEs through intermediate results, which reached every worker, so that with one worker
    /// lost every account's pull failed (issue 57, item 4).
    public func recordPull(device: UUID, account: UUID, version: Int64, complete: Bool, at: Date = Date()) async throws {
        try await withStatementSpan("pull: record what the device has", .update, "device_sync") {
            try await pool(for: account).withConnection { connection in
                if try await route.form(on: connection, logger: logger) == .distributedFunction {
                    try await recordPullAsFunction(device: device, account: account, version: version, complete: complete, at: at,
                                                   on: connection)
                    return
                }
                // Prepared: it follows every pull, and planned once per connection it costs
                // PostgreSQL no parse and no plan per pull.
                _ = try await connection.guardedExecute(RecordPullStatement(
                    account: account, device: device, version: version, complete: complete, at: at), logger: logger)
            }
        }
    }

    /// `RecordPullStatement`'s three writes as one call of `record_pull` (`RecordPullFunction`),
    /// which Citus sends to the account's worker whole.
    private func recordPullAsFunction(
        device: UUID, account: UUID, version: Int64, complete: Bool, at: Date, on connection: PostgresConnection
    ) async throws {
        try await connection.guardedQuery("""
            SELECT \(unescaped: RecordPullFunction.name)(\(account), \(device), \(version), \(at), \(complete), \(at.addingTimeInterval(-60)))
            """, logger: logger).drain()
    }

    private struct RecordPullStatement: PostgresPreparedStatement {
        static let name = "DeviceSync.recordPull"
        static let sql = """
            WITH head AS (
                SELECT h.account_id FROM account_heads h
                WHERE h.account_id = $1 AND $5
                  AND NOT EXISTS (SELECT 1 FROM device_sync s WHERE s.account_id = $1 AND s.device_id = $2
                                                                 AND s.synced_version >= $3 AND s.synced_at >= $6)
                FOR KEY SHARE OF h
            ), signed_in AS (
                -- Locked after the head: its rows come through the head's, whose lock comes first.
                SELECT d.device_id FROM head, devices d
                WHERE d.device_id = $2 AND d.account_id = $1 AND d.token_hash IS NOT NULL
                FOR SHARE OF d
            ), synced AS (
                INSERT INTO device_sync AS s (account_id, device_id, synced_version, synced_at)
                SELECT $1, $2, $3, $4 FROM signed_in
                ON CONFLICT (account_id, device_id) DO UPDATE SET synced_version = greatest(s.synced_version, excluded.synced_version), synced_at = excluded.synced_at
                WHERE s.synced_version < excluded.synced_version OR s.synced_at < $6
            )
            UPDATE push_tokens SET pulled_version = $3
            WHERE account_id = $1 AND device_id = $2 AND pulled_version < $3
            """
        static var bindingDataTypes: [PostgresDataType] { [.uuid, .uuid, .int8, .timestamptz, .bool, .timestamptz] }

        var account: UUID
        var device: UUID
        var version: Int64
        var complete: Bool
        var at: Date

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(account)
            bindings.append(device)
            bindings.append(version)
            bindings.append(at)
            bindings.append(complete)
            bindings.append(at.addingTimeInterval(-60))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    /// The account's signed-in devices, in the order they were made, each with the version its
    /// latest complete pull brought it to (0: none yet), when, and whether its learning is
    /// paused; and the account's version now, and whether its learning is paused. The account's
    /// rules come on the first row alone and are decoded once, however many devices it has.
    public func devices(account: UUID) async throws -> (version: Int64, learningPaused: Bool, devices: [SyncedDevice]) {
        let rows = try await client.guardedQuery("""
            SELECT coalesce((SELECT a.version FROM projection_accounts a WHERE a.account_id = \(account)), 0),
                   CASE WHEN row_number() OVER (ORDER BY d.created_at, d.device_id) = 1
                        THEN (SELECT a.learning FROM projection_accounts a WHERE a.account_id = \(account)) END,
                   d.device_id, d.name, d.platform, coalesce(s.synced_version, 0), s.synced_at
            FROM devices d
            LEFT JOIN device_sync s ON s.account_id = d.account_id AND s.device_id = d.device_id
            WHERE d.account_id = \(account) AND d.revoked_at IS NULL
            ORDER BY d.created_at, d.device_id
            """, logger: logger)
        var version: Int64 = 0
        var learning = LearningRules()
        var devices: [SyncedDevice] = []
        for try await (head, rules, id, name, platform, synced, at) in rows.decode((Int64, ByteBuffer?, UUID, String, String, Int64, Date?).self) {
            version = head
            if let rules { learning = try LearningRules(stored: rules) }
            devices.append(SyncedDevice(deviceId: id, name: name, platform: platform, syncedVersion: synced, syncedAt: at,
                                        learningPaused: learning.isPaused(.device(id))))
        }
        return (version, learning.isPaused(.account), devices)
    }
}
