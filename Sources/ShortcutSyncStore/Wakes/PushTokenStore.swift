import Foundation
import Logging
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// Devices' push tokens and the state of their background wakes (DESIGN §6, migration 0012).
///
/// Every statement names its account, but for the wakers' two scans (`sweep`, `claimDue`), which
/// are cross-account by nature and listed in `.ci/cross-account-statements.txt`.
public struct PushTokenStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Registers (or replaces) the device's token; false when the device is not signed in.
    /// A newer registration restarts the token's failures and moves `registered_at`, which a later
    /// `410 Unregistered` with an older timestamp then does not overrule.
    ///
    /// A token wakes one device: the registration takes it from any other device that held it,
    /// of this account or another (migration 0015). Two registrations of one token at the same
    /// moment may both keep it, until either registers again.
    public func register(_ registration: PushTokenRegistration, device: UUID, account: UUID) async throws -> Bool {
        guard try await insert(registration, device: device, account: account) else { return false }
        try await client.guardedQuery("""
            DELETE FROM push_tokens t
            WHERE t.token = \(registration.token) AND NOT (t.account_id = \(account) AND t.device_id = \(device))
            """, logger: logger)
        return true
    }

    /// The token's row, written only while the account's head exists and the device is signed
    /// in, in a transaction that takes a key-share lock of the head first and only then reads the
    /// device: a sign-out or an erasure (each takes the head `FOR UPDATE` before it removes the
    /// account's push tokens) either waits for this registration to commit, and then removes its
    /// row, or commits first, and then this one, having waited for the lock, reads the device
    /// signed out (or finds no head) and writes nothing (issue 65, item 10: one statement read the
    /// device in a snapshot from before the sign-out, and its row outlived it).
    private func insert(_ registration: PushTokenRegistration, device: UUID, account: UUID) async throws -> Bool {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                let head = try await connection.guardedQuery("""
                    SELECT 1 FROM account_heads h WHERE h.account_id = \(account) FOR KEY SHARE OF h
                    """, logger: logger).decode(Int.self).collectAll()
                guard !head.isEmpty else { return false }
                let rows = try await connection.guardedQuery("""
                    INSERT INTO push_tokens (account_id, device_id, token, topic, environment, registered_at)
                    SELECT \(account), \(device), \(registration.token), \(registration.topic), \(registration.environment), clock_timestamp()
                    FROM devices d WHERE d.account_id = \(account) AND d.device_id = \(device) AND d.token_hash IS NOT NULL
                    ON CONFLICT (account_id, device_id) DO UPDATE SET
                        token = excluded.token, topic = excluded.topic, environment = excluded.environment,
                        registered_at = excluded.registered_at, failures = 0
                    RETURNING 1
                    """, logger: logger)
                return try await !rows.decode(Int.self).collectAll().isEmpty
            }
        }
    }

    /// Forgets the device's token: no more wakes.
    public func remove(device: UUID, account: UUID) async throws {
        try await client.guardedQuery("DELETE FROM push_tokens WHERE account_id = \(account) AND device_id = \(device)", logger: logger)
    }

    /// After a change to `version` of the account: its devices with a token that have not pulled
    /// that far, and were not woken for it already, get a wake due `delay` from now (unless one is
    /// due already: the first change sets the time).
    public func scheduleWakes(account: UUID, version: Int64, delay: Duration) async throws {
        try await scheduleWakes(versions: [account: version], delay: delay)
    }

    /// The same for every account of one change notification, in one statement: a waker hears
    /// every push of every server, and one round trip per account would load the database
    /// beside the pushes.
    public func scheduleWakes(versions: [UUID: Int64], delay: Duration) async throws {
        guard !versions.isEmpty else { return }
        let accounts = Array(versions.keys), heads = accounts.map { versions[$0] ?? 0 }
        // Cross-account (DESIGN §6): the accounts of one notification, each with its own version.
        // `account_id = ANY(…)` lets Citus prune to those accounts' shards (one for one account).
        try await client.guardedQuery("""
            UPDATE push_tokens t SET due_at = now() + make_interval(secs => \(delay.inSeconds))
            FROM unnest(\(accounts)::uuid[], \(heads)::int8[]) AS c(account_id, version)
            WHERE t.account_id = ANY(\(accounts)::uuid[]) AND t.account_id = c.account_id
              AND t.due_at IS NULL AND greatest(t.pulled_version, t.woken_version) < c.version
            """, logger: logger)
    }

    /// Schedules wakes for every device behind its account, on every account: what a waker does
    /// when it starts and after it may have missed change notifications (cross-account).
    public func sweep(delay: Duration) async throws {
        // Cross-account (DESIGN §6): the wakers' safety net, when notifications may have been lost.
        try await client.guardedQuery("""
            UPDATE push_tokens t SET due_at = now() + make_interval(secs => \(delay.inSeconds))
            FROM account_heads h
            WHERE h.account_id = t.account_id AND t.due_at IS NULL AND greatest(t.pulled_version, t.woken_version) < h.version
            """, logger: logger)
    }

    /// Takes up to `limit` devices whose wake is due, each by exactly one waker of all the
    /// servers (`FOR UPDATE SKIP LOCKED`, and the row's due time moved when it commits). Of those,
    /// the ones still behind and not woken within `interval` are returned to be woken now, each
    /// under a `lease`: their wake is due again when it ends, so that a waker that stops (or dies)
    /// between the claim and APNs' answer leaves it to another, not lost. The rate-limited get
    /// their wake pushed back to `interval` after the last; the ones that pulled meanwhile get none.
    ///
    /// A plain read of the wakes due soonest (every shard, no lock), then one claim per account
    /// of them (`claimDue(account:devices:…)`): Citus locks rows only in a statement that reaches
    /// a single shard, and one PostgreSQL does the same work this way.
    public func claimDue(limit: Int, interval: Duration, lease: Duration = .seconds(60)) async throws -> [DueWake] {
        // Cross-account (DESIGN §6): the wakers' queue, like the maintenance queue; no lock here.
        let due = try await client.guardedQuery("""
            SELECT t.account_id, t.device_id FROM push_tokens t
            WHERE t.due_at <= now()
            ORDER BY t.due_at LIMIT \(limit)
            """, logger: logger).decode((UUID, UUID).self).collectAll()
        var devices: [UUID: [UUID]] = [:]
        for (account, device) in due { devices[account, default: []].append(device) }
        var wakes: [DueWake] = []
        for (account, devices) in devices {
            wakes += try await claimDue(account: account, devices: devices, interval: interval, lease: lease)
        }
        return wakes
    }

    /// Claims the account's `devices` whose wake is still due and that no other waker holds
    /// (one shard, `SKIP LOCKED`), as `claimDue(limit:…)` says. The times are read in `decided`,
    /// so that the UPDATE's CASE calls no function: Citus refuses a STABLE function (`now()`,
    /// timestamptz arithmetic) in a CASE of an UPDATE.
    func claimDue(account: UUID, devices: [UUID], interval: Duration, lease: Duration) async throws -> [DueWake] {
        let rows = try await client.guardedQuery("""
            WITH due AS (
                SELECT t.account_id, t.device_id FROM push_tokens t
                WHERE t.account_id = \(account) AND t.device_id = ANY(\(devices)::uuid[]) AND t.due_at <= now()
                FOR UPDATE OF t SKIP LOCKED
            ), decided AS (
                SELECT t.account_id, t.device_id, h.version, greatest(t.pulled_version, t.woken_version) < h.version AS behind,
                       coalesce(t.last_wake_at > now() - make_interval(secs => \(interval.inSeconds)), false) AS limited,
                       t.last_wake_at + make_interval(secs => \(interval.inSeconds)) AS allowed_at,
                       now() + make_interval(secs => \(lease.inSeconds)) AS lease_ends_at
                FROM due
                JOIN push_tokens t ON t.account_id = due.account_id AND t.device_id = due.device_id
                JOIN account_heads h ON h.account_id = t.account_id
                WHERE t.account_id = \(account) AND h.account_id = \(account)
            )
            UPDATE push_tokens t SET
                due_at = CASE WHEN NOT d.behind THEN NULL WHEN d.limited THEN d.allowed_at ELSE d.lease_ends_at END
            FROM decided d
            WHERE t.account_id = \(account) AND t.account_id = d.account_id AND t.device_id = d.device_id
            RETURNING t.account_id, t.device_id, t.token, t.topic, t.environment, t.registered_at, d.version, t.failures,
                      d.behind AND NOT d.limited
            """, logger: logger)
        var wakes: [DueWake] = []
        for try await (account, device, token, topic, environment, registeredAt, version, failures, send)
            in rows.decode((UUID, UUID, String, String, String, Date, Int64, Int, Bool).self) where send {
            wakes.append(DueWake(account: account, device: device,
                                 registration: PushTokenRegistration(token: token, topic: topic, environment: environment),
                                 registeredAt: registeredAt, version: version, failures: failures))
        }
        return wakes
    }

    /// APNs accepted the wake: the device was woken for its version, now (the interval counts
    /// from here), and no wake is due until the account changes again — or unless it changed
    /// while the wake was under way: that change's notice found the claim's lease as the device's
    /// due time and scheduled nothing (`scheduleWakes` keeps a due time), so the wake is due at
    /// once, and the next claim puts it off to the interval's end. (Before, the answer cleared the
    /// due time and such a wake waited for the sweep, a minute later: a loaded full suite saw it.)
    public func delivered(_ wake: DueWake, at now: Date = Date()) async throws {
        try await client.guardedQuery("""
            UPDATE push_tokens t SET wake_count = t.wake_count + 1, failures = 0, last_wake_at = now(),
                due_at = CASE WHEN h.version > greatest(t.pulled_version, t.woken_version, \(wake.version)) THEN \(now) END,
                woken_version = greatest(t.woken_version, \(wake.version))
            FROM account_heads h
            WHERE t.account_id = \(wake.account) AND h.account_id = \(wake.account) AND t.device_id = \(wake.device)
                  AND t.token = \(wake.registration.token)
            """, logger: logger)
    }

    /// APNs refused the wake for a reason a retry cannot mend (this server's fault): no wake for
    /// this version; the next change brings another, one made while it was tried too (as for
    /// `delivered`). The time is a parameter: Citus refuses `now()` in a CASE of an UPDATE.
    public func gaveUp(_ wake: DueWake, at now: Date = Date()) async throws {
        try await client.guardedQuery("""
            UPDATE push_tokens t
            SET due_at = CASE WHEN h.version > greatest(t.pulled_version, t.woken_version, \(wake.version)) THEN \(now) END,
                woken_version = greatest(t.woken_version, \(wake.version))
            FROM account_heads h
            WHERE t.account_id = \(wake.account) AND h.account_id = \(wake.account) AND t.device_id = \(wake.device)
                  AND t.token = \(wake.registration.token)
            """, logger: logger)
    }

    /// APNs could not take the wake now (429, 5xx, 403, no connection): it is due again after
    /// `backoff` (the rate limit still counts from the last wake APNs took). Returns the
    /// failures in a row so far.
    @discardableResult
    public func retryLater(_ wake: DueWake, backoff: Duration) async throws -> Int {
        let rows = try await client.guardedQuery("""
            UPDATE push_tokens SET due_at = now() + make_interval(secs => \(backoff.inSeconds)), failures = failures + 1
            WHERE account_id = \(wake.account) AND device_id = \(wake.device) AND token = \(wake.registration.token)
            RETURNING failures
            """, logger: logger)
        return try await rows.decode(Int.self).collectAll().first ?? 0
    }

    /// Drops the token APNs refused for good, unless the device registered a token again after
    /// `unregisteredAt` (APNs' timestamp of a `410`) or registered another token meanwhile.
    /// True when it was dropped.
    @discardableResult
    public func drop(_ wake: DueWake, unregisteredAt: Date? = nil) async throws -> Bool {
        let rows = try await client.guardedQuery("""
            DELETE FROM push_tokens
            WHERE account_id = \(wake.account) AND device_id = \(wake.device) AND token = \(wake.registration.token)
              AND (\(unregisteredAt)::timestamptz IS NULL OR registered_at < \(unregisteredAt)::timestamptz)
            RETURNING 1
            """, logger: logger)
        return try await !rows.decode(Int.self).collectAll().isEmpty
    }

    /// The device's wake state, for operators and tests; nil when it has no token.
    public func state(device: UUID, account: UUID) async throws -> PushTokenState? {
        let rows = try await client.guardedQuery("""
            SELECT token, topic, environment, registered_at, pulled_version, woken_version, due_at, last_wake_at, wake_count, failures
            FROM push_tokens WHERE account_id = \(account) AND device_id = \(device)
            """, logger: logger)
        for try await (token, topic, environment, registeredAt, pulled, woken, due, lastWake, count, failures)
            in rows.decode((String, String, String, Date, Int64, Int64, Date?, Date?, Int64, Int).self) {
            return PushTokenState(
                registration: PushTokenRegistration(token: token, topic: topic, environment: environment),
                registeredAt: registeredAt, pulledVersion: pulled, wokenVersion: woken, dueAt: due,
                lastWakeAt: lastWake, wakeCount: count, failures: failures)
        }
        return nil
    }
}
