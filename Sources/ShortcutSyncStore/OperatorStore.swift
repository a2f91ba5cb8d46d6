import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The SQL of the operators' command line (`shortcut-sync admin`): what the service holds, read
/// for people; the log of one account for a replay; the log horizon.
public struct OperatorStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func accounts() async throws -> [AccountSummary] {
        let rows = try await client.query("""
            SELECT a.account_id, a.created_at,
                   (SELECT count(*) FROM devices d WHERE d.account_id = a.account_id),
                   (SELECT count(*) FROM events e WHERE e.account_id = a.account_id),
                   (SELECT max(recorded_at) FROM events e WHERE e.account_id = a.account_id)
            FROM accounts a ORDER BY a.created_at, a.account_id
            """, logger: logger)
        return try await rows.decode((UUID, Date, Int64, Int64, Date?).self).collectAll().map {
            AccountSummary(accountId: $0.0, createdAt: $0.1, devices: Int($0.2), events: $0.3, lastEventAt: $0.4)
        }
    }

    /// How many events the log holds (committed and visible now).
    public func eventCount() async throws -> Int {
        Int(try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int64.self).collectAll().first ?? 0)
    }

    public func accountExists(_ account: UUID) async throws -> Bool {
        try await client.query("SELECT count(*) FROM accounts WHERE account_id = \(account)", logger: logger)
            .decode(Int64.self).collectAll().first == 1
    }

    /// The account a device belongs to, nil if there is no such device.
    public func account(ofDevice device: UUID) async throws -> UUID? {
        try await client.query("SELECT account_id FROM devices WHERE device_id = \(device)", logger: logger)
            .decode(UUID.self).collectAll().first
    }

    public func devices(account: UUID) async throws -> [DeviceSummary] {
        let rows = try await client.query("""
            SELECT d.device_id, d.account_id, d.name, d.platform, d.created_at, d.revoked_at,
                   e.events, e.last_seq, e.last_at, p.installed
            FROM devices d
            LEFT JOIN LATERAL (
                SELECT count(*) AS events, coalesce(max(seq), 0) AS last_seq, max(recorded_at) AS last_at
                FROM events WHERE account_id = d.account_id AND device_id = d.device_id
            ) e ON true
            LEFT JOIN projection_devices p ON p.account_id = d.account_id AND p.device_id = d.device_id
            WHERE d.account_id = \(account)
            ORDER BY d.created_at, d.device_id
            """, logger: logger)
        return try await rows.decode((UUID, UUID, String, String, Date, Date?, Int64, Int64, Date?, [String]?).self).collectAll().map {
            DeviceSummary(
                device: DeviceRecord(deviceId: $0.0, accountId: $0.1, name: $0.2, platform: $0.3, createdAt: $0.4, revokedAt: $0.5),
                events: $0.6, lastAcceptedSeq: $0.7, lastEventAt: $0.8, installedApps: $0.9)
        }
    }

    /// Up to `limit` committed events of the filter, by position.
    public func events(_ filter: EventFilter, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(filter.account) AND position > \(filter.afterPosition ?? 0)
              AND (\(filter.device)::uuid IS NULL OR device_id = \(filter.device))
              AND (\(filter.type?.rawValue)::text IS NULL OR type = \(filter.type?.rawValue))
            ORDER BY position
            LIMIT \(limit)
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }

    /// The filter's events after `checkpoint` in log order, never past one that may still commit
    /// below them: read again and again from the last one's checkpoint, it misses none (`--follow`).
    public func committedEvents(_ filter: EventFilter, after checkpoint: LogCheckpoint, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE (tx_id, position) > (\(String(checkpoint.transactionID))::xid8, \(checkpoint.position))
              AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
              AND account_id = \(filter.account) AND position > \(filter.afterPosition ?? 0)
              AND (\(filter.device)::uuid IS NULL OR device_id = \(filter.device))
              AND (\(filter.type?.rawValue)::text IS NULL OR type = \(filter.type?.rawValue))
            ORDER BY events.tx_id, events.position
            LIMIT \(limit)
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }

    /// The checkpoint of the last event that can be read now (the start of `--follow` without `--after`).
    public func horizonCheckpoint() async throws -> LogCheckpoint {
        try await client.withConnection { try await PostgresEventStore(client: client, logger: logger).horizon(on: $0).checkpoint }
    }

    /// The events of one account in `prefix`, in log order: what a replay folds.
    public func accountLog(_ account: UUID, _ prefix: LogPrefix) async throws -> [RecordedEvent] {
        let (position, recordedAt): (Int64?, Date?) = switch prefix {
        case .all: (nil, nil)
        case .throughPosition(let position): (position, nil)
        case .recordedBy(let time): (nil, time)
        }
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(account)
              AND (\(position)::int8 IS NULL OR position <= \(position))
              AND (\(recordedAt)::timestamptz IS NULL OR recorded_at <= \(recordedAt))
            ORDER BY events.tx_id, events.position
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }

    /// Where the worker stands, how long its oldest pending event has waited, and what holds
    /// the log's horizon back, if anything does.
    public func projectionStatus() async throws -> ProjectionStatusReport {
        let status = try await ProjectionStore(client: client, logger: logger).status()
        let rows = try await client.query("""
            SELECT coalesce(extract(epoch FROM now() - (
                       SELECT min(recorded_at) FROM events e, projection_checkpoint c
                       WHERE c.name = 'live' AND (e.tx_id, e.position) > (c.tx_id, c.position)))::float8, 0),
                   (SELECT count(*) FROM events WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot()))
            """, logger: logger)
        var report = ProjectionStatusReport(
            checkpoint: status.checkpoint, headPosition: status.headPosition, pendingEvents: status.pendingEvents,
            lagSeconds: 0, parkedAccounts: status.parkedAccounts, eventsBehindHorizon: 0, horizonHolder: nil)
        for try await (lag, behind) in rows.decode((Double, Int64).self) {
            report.lagSeconds = lag
            report.eventsBehindHorizon = behind
        }
        if report.eventsBehindHorizon > 0 {
            report.horizonHolder = try await oldestOpenTransaction()
        }
        return report
    }

    /// The oldest transaction that has an id (it wrote, or asked for one) and is still open;
    /// one of this database first (transaction ids, and so the horizon, are the whole server's).
    public func oldestOpenTransaction() async throws -> HorizonHolder? {
        let rows = try await client.query("""
            SELECT pid, coalesce(application_name, ''), coalesce(state, ''),
                   coalesce(extract(epoch FROM now() - xact_start)::float8, 0)
            FROM pg_stat_activity
            WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
            ORDER BY datname IS NOT DISTINCT FROM current_database() DESC, age(backend_xid) DESC
            LIMIT 1
            """, logger: logger)
        return try await rows.decode((Int32, String, String, Double).self).collectAll().first.map {
            HorizonHolder(pid: $0.0, applicationName: $0.1, state: $0.2, ageSeconds: $0.3)
        }
    }
}
