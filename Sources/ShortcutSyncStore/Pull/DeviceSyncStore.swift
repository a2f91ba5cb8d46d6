import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import Tracing

/// What each device has of its account, recorded by its pulls (issue 33): for the wakes (a device
/// at its account's version needs none, DESIGN §6) and for the account's devices, which show
/// "synced to your iPad two minutes ago" (`GET /v1/devices`).
public struct DeviceSyncStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Records that the device pulled its view at `version`, `at` this moment, in one statement:
    /// its push token's pulled version (no row, no write, for a device without a token) and, when
    /// the pull was `complete` (its last page), the version the device has and when — written
    /// when the version moves on, or when the row is a minute old, so a device pulling in a loop
    /// writes little. (The times are the service's, as values: Citus takes no function but an
    /// immutable one in an ON CONFLICT's condition.)
    public func recordPull(device: UUID, account: UUID, version: Int64, complete: Bool, at: Date = Date()) async throws {
        let stale = at.addingTimeInterval(-60)
        try await withStatementSpan("pull: record what the device has", .update, "device_sync") {
            try await client.query("""
            WITH synced AS (
                INSERT INTO device_sync AS s (account_id, device_id, synced_version, synced_at)
                SELECT \(account), \(device), \(version), \(at) WHERE \(complete)
                ON CONFLICT (account_id, device_id) DO UPDATE SET synced_version = greatest(s.synced_version, excluded.synced_version), synced_at = excluded.synced_at
                WHERE s.synced_version < excluded.synced_version OR s.synced_at < \(stale)
            )
            UPDATE push_tokens SET pulled_version = \(version)
            WHERE account_id = \(account) AND device_id = \(device) AND pulled_version < \(version)
            """, logger: logger)
        }
    }

    /// The account's signed-in devices, in the order they were made, each with the version its
    /// latest complete pull brought it to (0: none yet), when, and whether its learning is
    /// paused; and the account's version now, and whether its learning is paused.
    public func devices(account: UUID) async throws -> (version: Int64, learningPaused: Bool, devices: [SyncedDevice]) {
        let rows = try await client.query("""
            SELECT coalesce((SELECT a.version FROM projection_accounts a WHERE a.account_id = \(account)), 0),
                   (SELECT a.learning FROM projection_accounts a WHERE a.account_id = \(account)),
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
