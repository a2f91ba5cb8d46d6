import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The SQL of the operators' command line (`shortcut-sync admin`): what the service holds, read
/// for people; the log of one account for a replay; the log horizon.
public struct OperatorStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    /// The operators' SQL against the database `client` reaches.
    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Every account with its numbers of devices and events, oldest first.
    public func accounts() async throws -> [AccountSummary] {
        // Cross-account: an operators' listing of every account. The counts are grouped in
        // subqueries of FROM rather than correlated in the target list: Citus cannot join the
        // reference table `accounts` with correlated subqueries over the distributed `events`
        // ("complex joins are only supported when all distributed tables are co-located and
        // joined on their distribution columns"), and plans these per shard, grouped by the
        // distribution column. Both read every event's index entry once, as before.
        let rows = try await client.query("""
            SELECT a.account_id, a.created_at, coalesce(d.devices, 0), coalesce(e.events, 0), e.last_at
            FROM accounts a
            LEFT JOIN (SELECT account_id, count(*) AS devices FROM devices GROUP BY account_id) d ON d.account_id = a.account_id
            LEFT JOIN (SELECT account_id, count(*) AS events, max(recorded_at) AS last_at FROM events GROUP BY account_id) e
                ON e.account_id = a.account_id
            ORDER BY a.created_at, a.account_id
            """, logger: logger)
        return try await rows.decode((UUID, Date, Int64, Int64, Date?).self).collectAll().map {
            AccountSummary(accountId: $0.0, createdAt: $0.1, devices: Int($0.2), events: $0.3, lastEventAt: $0.4)
        }
    }

    /// How many events the log holds (committed and visible now).
    public func eventCount() async throws -> Int {
        // Cross-account: an operators' count of the whole log.
        Int(try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int64.self).collectAll().first ?? 0)
    }

    /// Whether the account is registered.
    public func accountExists(_ account: UUID) async throws -> Bool {
        try await client.query("SELECT count(*) FROM accounts WHERE account_id = \(account)", logger: logger)
            .decode(Int64.self).collectAll().first == 1
    }

    /// The generation of the account's token (0021: 1 for the first, one more at each rotation),
    /// nil if there is no such account.
    public func tokenGeneration(account: UUID) async throws -> Int? {
        try await client.query("SELECT token_generation FROM accounts WHERE account_id = \(account)", logger: logger)
            .decode(Int32.self).collectAll().first.map(Int.init)
    }

    /// The account a device belongs to, nil if there is no such device.
    public func account(ofDevice device: UUID) async throws -> UUID? {
        // Cross-account: the account is what is looked up, by the device's (unique) id.
        try await client.query("SELECT account_id FROM devices WHERE device_id = \(device)", logger: logger)
            .decode(UUID.self).collectAll().first
    }

    /// The account's devices with their events, last seq, reported apps and wakes, oldest first.
    /// Every distributed table is read with the account's id (no LATERAL join on the reference
    /// table `devices`, which Citus refuses): one shard on Citus.
    public func devices(account: UUID) async throws -> [DeviceSummary] {
        let rows = try await client.query("""
            SELECT d.device_id, d.account_id, d.name, d.platform, d.created_at, d.revoked_at,
                   coalesce(e.events, 0), coalesce(e.last_seq, 0), e.last_at, p.installed,
                   left(t.token, 8), t.environment, t.last_wake_at, coalesce(t.wake_count, 0), d.signed_in_with
            FROM devices d
            LEFT JOIN (
                SELECT device_id, count(*) AS events, max(seq) AS last_seq, max(recorded_at) AS last_at
                FROM events WHERE account_id = \(account) GROUP BY device_id
            ) e ON e.device_id = d.device_id
            LEFT JOIN projection_devices p ON p.account_id = \(account) AND p.device_id = d.device_id
            LEFT JOIN push_tokens t ON t.account_id = \(account) AND t.device_id = d.device_id
            WHERE d.account_id = \(account)
            ORDER BY d.created_at, d.device_id
            """, logger: logger)
        var devices: [DeviceSummary] = []
        for try await (id, account, name, platform, created, revoked, events, lastSeq, lastAt, installed, token, environment, lastWake, wakes, signedInWith)
            in rows.decode((UUID, UUID, String, String, Date, Date?, Int64, Int64, Date?, [String]?, String?, String?, Date?, Int64, Int32?).self) {
            devices.append(DeviceSummary(
                device: DeviceRecord(deviceId: id, accountId: account, name: name, platform: platform, createdAt: created, revokedAt: revoked),
                events: events, lastAcceptedSeq: lastSeq, lastEventAt: lastAt, installedApps: installed,
                pushToken: token.map { $0 + "…" }, pushEnvironment: environment, lastWakeAt: lastWake, wakeCount: wakes,
                signedInWith: signedInWith.map(Int.init)))
        }
        return devices
    }

    /// Up to `limit` committed events of the filter, in the account's version order, after the
    /// filter's `afterVersion`. Versions are taken under the account's head lock and commit in
    /// their order, so reading again after the last version read misses none (`--follow`).
    public func events(_ filter: EventFilter, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(filter.account) AND version > \(filter.afterVersion ?? 0)
              AND (\(filter.device)::uuid IS NULL OR device_id = \(filter.device))
              AND (\(filter.type?.rawValue)::text IS NULL OR type = \(filter.type?.rawValue))
            ORDER BY version
            LIMIT \(limit)
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }

    /// The account's version: that of its last committed event, 0 when it has none (where
    /// `--follow` without `--after` starts).
    public func accountVersion(_ account: UUID) async throws -> Int64 {
        try await PostgresEventStore(client: client, logger: logger).version(account: account)
    }

    /// The events of one account in `prefix`, in version order: what a replay folds.
    public func accountLog(_ account: UUID, _ prefix: LogPrefix) async throws -> [RecordedEvent] {
        let (version, recordedAt): (Int64?, Date?) = switch prefix {
        case .all: (nil, nil)
        case .throughVersion(let version): (version, nil)
        case .recordedBy(let time): (nil, time)
        }
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(account)
              AND (\(version)::int8 IS NULL OR version <= \(version))
              AND (\(recordedAt)::timestamptz IS NULL OR recorded_at <= \(recordedAt))
            ORDER BY version
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }

    /// Where the maintenance stands (`admin projections status`): the epoch, the accounts whose
    /// projections are behind their head and by how many events, how long the oldest unfolded
    /// event has waited, the parked accounts, and what the rebuild tables hold.
    public func projectionStatus() async throws -> ProjectionStatusReport {
        let status = try await ProjectionStore(client: client, logger: logger).status()
        var report = ProjectionStatusReport(maintenance: status)
        if status.accountsBehind > 0 {
            // Cross-account: the accounts behind (partial index account_heads_behind_flag), each
            // joined with its own first unfolded event.
            let rows = try await client.query("""
                SELECT coalesce(extract(epoch FROM now() - min(e.recorded_at))::float8, 0)
                FROM account_heads h
                JOIN events e ON e.account_id = h.account_id AND e.version = h.folded_version + 1
                WHERE h.behind
                """, logger: logger)
            report.oldestWaitSeconds = try await rows.decode(Double.self).collectAll().first ?? 0
        }
        // Cross-account: the accounts a migration marked to refold (partial index account_heads_refold).
        report.accountsToRefold = try await client.query("SELECT count(*) FROM account_heads WHERE refold_pending", logger: logger)
            .decode(Int64.self).collectAll().first ?? 0
        report.parked = try await parkedAccounts()
        report.rebuild = try await rebuildState()
        report.compaction = try await ProjectionStore(client: client, logger: logger).compactionTotals()
        return report
    }

    /// The parked accounts, the longest parked first (at most `limit`).
    public func parkedAccounts(limit: Int = 20) async throws -> [ParkedAccount] {
        // Cross-account: an operators' listing of the parked accounts.
        let rows = try await client.query("""
            SELECT account_id, failed_version, error, attempts FROM projection_parked_accounts
            ORDER BY parked_at, account_id LIMIT \(limit)
            """, logger: logger)
        return try await rows.decode((UUID, Int64, String, Int32).self).collectAll().map {
            ParkedAccount(accountId: $0.0, failedVersion: $0.1, error: $0.2, attempts: Int($0.3))
        }
    }

    /// What the rebuild tables hold: how many accounts a rebuild (running, or the last one)
    /// wrote, of how many accounts with events, since when; nil when they hold none.
    public func rebuildState() async throws -> RebuildState? {
        // Cross-account: operators' counts over the rebuild tables and the heads.
        let rows = try await client.query("""
            SELECT (SELECT count(*) FROM rebuild.projection_accounts),
                   (SELECT count(*) FROM account_heads WHERE version > 0),
                   (SELECT updated_at FROM rebuild.projection_checkpoint WHERE name = 'live')
            """, logger: logger)
        for try await (rebuilt, total, started) in rows.decode((Int64, Int64, Date?).self) where rebuilt > 0 {
            return RebuildState(accountsRebuilt: rebuilt, accountsWithEvents: total, startedAt: started)
        }
        return nil
    }
}
