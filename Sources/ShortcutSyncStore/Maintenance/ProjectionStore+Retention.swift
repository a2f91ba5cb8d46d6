import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// What one look at the accounts due for compaction did (`ProjectionStore.compactNextDue`).
public enum RetentionStep: Sendable {
    /// No account was due (or every one due was held by another task).
    case idle
    /// `account` was looked at: not worth compacting yet, its next look scheduled.
    case scheduled(account: UUID)
    /// `account` was compacted (`compaction.outcome` says whether anything was removed).
    case compacted(Compaction)
    /// `account`'s compaction failed with `error` and was rolled back; it is the account's
    /// `failures`-th in a row, and the account is next looked at after `retryIn`
    /// (`CompactionSchedule.retry(afterFailures:)`), not at once.
    case failed(account: UUID, failures: Int, retryIn: Duration, error: any Error)
}

/// How many compactions the heads record, and what they removed; and the accounts due.
public struct CompactionTotals: Sendable, Hashable, Codable {
    /// Accounts with a horizon (compacted at least once).
    public var accountsCompacted: Int64 = 0
    /// Compactions, events and bytes removed, summed over every account's head.
    public var compactions: Int64 = 0
    public var eventsCompacted: Int64 = 0
    public var bytesCompacted: Int64 = 0
    /// Accounts the maintenance tasks are to look at again (`compaction_due_at` passed: when they
    /// last looked, the retention would pass over `minimumEvents` of their events by now, or they
    /// had fewer and a retention has passed since), and those they never looked at.
    public var accountsDue: Int64 = 0
    public var accountsNotLookedAt: Int64 = 0

    public init() {}
}

extension ProjectionStore {
    /// Takes one account due for compaction (`account_heads.compaction_due_at` passed, or never
    /// looked at) with `FOR NO KEY UPDATE SKIP LOCKED` on its head, and claims it by putting its
    /// due time `CompactionSchedule.claim` on, in a short transaction of its own: an account held
    /// by a push or another task is skipped, never waited for, and no other task takes it while
    /// this one works (nor, if this process dies, for `claim`). Then, in a transaction of its
    /// own: if at least `schedule.minimumEvents` of its events past its horizon are older than
    /// now − `schedule.keepHistory`, compacts it through the last version recorded before then
    /// (`compact`, which holds the head only for its second step), and writes when it is next due.
    public func compactNextDue(_ schedule: CompactionSchedule, candidates: Int = 8) async throws -> RetentionStep {
        guard let (account, claimedUntil) = try await claimNextDue(schedule, candidates: candidates) else { return .idle }
        let keep = schedule.keepSeconds, retry = schedule.retrySeconds
        do {
            return try await client.withConnection { connection in
                try await connection.inTransaction(logger: logger) { connection -> RetentionStep in
                    var step = RetentionStep.scheduled(account: account)
                    if try await oldEventsDue(account, schedule, on: connection) {
                        let through = try await lastVersion(of: account, recordedBefore: Date().addingTimeInterval(-keep), on: connection)
                        var compaction = Compaction(account: account, outcome: .compacted, dryRun: false)
                        try await compact(&compaction, through: through, on: connection)
                        step = .compacted(compaction)
                        if compaction.outcome != .compacted {
                            // The time as a value: Citus refuses a non-immutable function in some writes.
                            try await connection.guardedQuery("""
                                UPDATE account_heads SET compaction_due_at = \(Date().addingTimeInterval(retry)), compaction_failures = 0
                                WHERE account_id = \(account)
                                """, logger: logger)
                            return step
                        }
                    }
                    try await scheduleNextCompaction(of: account, schedule, on: connection)
                    return step
                }
            }
        } catch where error is CancellationError || Task.isCancelled {
            // Stopped (the process shutting down): what it wrote is rolled back, and its claim is
            // given back, so that the account is due again at once, not after `claim`.
            await giveBack(claimedUntil, of: account)
            throw error
        } catch {
            // What the compaction wrote is rolled back; the account's failure is counted and its
            // next look put off, so that it is not taken again at once by every task.
            return try await client.withConnection { connection in
                try await connection.inTransaction(logger: logger) { connection in
                    try await countFailedCompaction(of: account, schedule, error: error, on: connection)
                }
            }
        }
    }

    /// How long a stopped compaction tries to give its claim back (`giveBack`) before it lets
    /// the claim run out by itself.
    static let claimGiveBackDeadline: Duration = .seconds(2)

    /// Makes `account` due now, if its head still holds the claim `claimedUntil` (nothing else
    /// wrote it since): in a task of its own, since the compaction's is cancelled, for at most
    /// `claimGiveBackDeadline` (a database away leaves the claim to run out).
    private func giveBack(_ claimedUntil: Date, of account: UUID) async {
        let client = client, logger = logger
        let giveBack = Task {
            try await SessionLimits.withStatementDeadline(Self.claimGiveBackDeadline) {
                try await client.withConnection { connection in
                    // The time as a value: Citus refuses a non-immutable function in some writes.
                    try await connection.guardedQuery("""
                        UPDATE account_heads SET compaction_due_at = \(Date())
                        WHERE account_id = \(account) AND compaction_due_at = \(claimedUntil)
                        """, logger: logger)
                }
            }
        }
        let deadline = Task {
            try await Task.sleep(for: Self.claimGiveBackDeadline)
            giveBack.cancel()
        }
        do {
            try await giveBack.value
            logger.notice("a stopped compaction gave its account back", metadata: ["account": "\(account)"])
        } catch {
            logger.warning("a stopped compaction could not give its account back: it is due again once its claim runs out",
                           metadata: ["account": "\(account)", "claimed_until": "\(claimedUntil)"])
        }
        deadline.cancel()
    }

    /// The account `compactNextDue` compacts next, claimed for `CompactionSchedule.claim` (the
    /// time its claim runs out, as written); nil: none is due, or every one due is held.
    private func claimNextDue(_ schedule: CompactionSchedule, candidates: Int) async throws -> (UUID, Date)? {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection -> (UUID, Date)? in
                // Cross-account: the accounts due soonest (index account_heads_compaction_due), a plain read.
                let due = try await connection.guardedQuery("""
                    SELECT account_id FROM account_heads
                    WHERE compaction_due_at IS NULL OR compaction_due_at <= now()
                    ORDER BY compaction_due_at NULLS FIRST LIMIT \(candidates)
                    """, logger: logger).decode(UUID.self).collectAll()
                for account in due.shuffled() {
                    let held = try await connection.guardedQuery("""
                        SELECT h.account_id FROM account_heads h
                        WHERE h.account_id = \(account) AND (h.compaction_due_at IS NULL OR h.compaction_due_at <= now())
                        FOR NO KEY UPDATE OF h SKIP LOCKED
                        """, logger: logger).decode(UUID.self).collectAll()
                    guard !held.isEmpty else { continue }
                    // The time as a value: Citus refuses a non-immutable function in some writes.
                    // `giveBack` finds it by the same value, bound the same way.
                    let until = Date().addingTimeInterval(schedule.claim.inSeconds)
                    try await connection.guardedQuery("""
                        UPDATE account_heads SET compaction_due_at = \(until)
                        WHERE account_id = \(account)
                        """, logger: logger)
                    return (account, until)
                }
                return nil
            }
        }
    }

    /// Counts a failed compaction of the account on its head and puts its next look off by
    /// `CompactionSchedule.retry(afterFailures:)`.
    private func countFailedCompaction(
        of account: UUID, _ schedule: CompactionSchedule, error: any Error, on connection: PostgresConnection
    ) async throws -> RetentionStep {
        let before = try await connection.guardedQuery(
            "SELECT compaction_failures FROM account_heads WHERE account_id = \(account)", logger: logger
        ).decode(Int32.self).collectAll().first ?? 0
        let failures = Int(before) + 1
        let retryIn = schedule.retry(afterFailures: failures)
        // The time as a value: Citus refuses a non-immutable function in some writes.
        try await connection.guardedQuery("""
            UPDATE account_heads SET compaction_failures = \(Int32(clamping: failures)),
                                     compaction_due_at = \(Date().addingTimeInterval(retryIn.inSeconds))
            WHERE account_id = \(account)
            """, logger: logger)
        return .failed(account: account, failures: failures, retryIn: retryIn, error: error)
    }

    /// Whether `schedule.minimumEvents` of the account's events past its horizon were recorded
    /// before now − the retention (the events' versions follow their recording).
    private func oldEventsDue(_ account: UUID, _ schedule: CompactionSchedule, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.guardedQuery("""
            SELECT recorded_at < now() - make_interval(secs => \(schedule.keepSeconds))
            FROM events WHERE account_id = \(account) AND version > \(try await horizonVersion(of: account, on: connection))
            ORDER BY version OFFSET \(schedule.minimumEvents - 1) LIMIT 1
            """, logger: logger)
        return try await rows.decode(Bool.self).collectAll().first ?? false
    }

    /// Writes when the account is next due: the recorded time of its `minimumEvents`-th event past
    /// its horizon plus the retention; with fewer events, no sooner than now plus the retention
    /// (every event still to come is recorded after now). The time is read, then written as a
    /// value: Citus refuses `coalesce(…, now())` in an UPDATE (non-immutable in COALESCE).
    private func scheduleNextCompaction(of account: UUID, _ schedule: CompactionSchedule, on connection: PostgresConnection) async throws {
        let horizon = try await horizonVersion(of: account, on: connection)
        let recorded = try await connection.guardedQuery("""
            SELECT recorded_at FROM events WHERE account_id = \(account) AND version > \(horizon)
            ORDER BY version OFFSET \(schedule.minimumEvents - 1) LIMIT 1
            """, logger: logger).decode(Date.self).collectAll().first
        let due = (recorded ?? Date()).addingTimeInterval(schedule.keepSeconds)
        try await connection.guardedQuery(
            "UPDATE account_heads SET compaction_due_at = \(due), compaction_failures = 0 WHERE account_id = \(account)", logger: logger)
    }

    /// The account's horizon version (0: never compacted).
    func horizonVersion(of account: UUID, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.guardedQuery(
            "SELECT horizon FROM projection_accounts WHERE account_id = \(account)", logger: logger)
        guard let stored = try await rows.decode(ByteBuffer?.self).collectAll().first, let stored else { return 0 }
        return try CompactionColumns.horizon(stored: stored).version
    }

    /// The compactions the heads record, and the accounts due (`admin projections status`).
    public func compactionTotals() async throws -> CompactionTotals {
        // Cross-account: operators' sums over every head, and the compacted accounts' snapshots.
        let rows = try await client.guardedQuery("""
            SELECT h.compactions, h.events, h.bytes, h.due, h.unseen, s.accounts
            FROM (SELECT coalesce(sum(compactions), 0)::int8 AS compactions, coalesce(sum(compacted_events), 0)::int8 AS events,
                         coalesce(sum(compacted_bytes), 0)::int8 AS bytes,
                         count(*) FILTER (WHERE compaction_due_at <= now()) AS due,
                         count(*) FILTER (WHERE compaction_due_at IS NULL) AS unseen
                  FROM account_heads) h,
                 (SELECT count(*) AS accounts FROM snapshot.projection_accounts) s
            """, logger: logger)
        var totals = CompactionTotals()
        for try await (compactions, events, bytes, due, unseen, accounts) in rows.decode((Int64, Int64, Int64, Int64, Int64, Int64).self) {
            totals = CompactionTotals()
            totals.compactions = compactions
            totals.eventsCompacted = events
            totals.bytesCompacted = bytes
            totals.accountsDue = due
            totals.accountsNotLookedAt = unseen
            totals.accountsCompacted = accounts
        }
        return totals
    }
}
