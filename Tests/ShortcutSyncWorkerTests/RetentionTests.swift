import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// Retention the operator sets (issue 58, item 3; `--keep-history`): the maintenance tasks compact
/// by themselves an account whose history past the retention is worth it, its views unchanged,
/// and `admin projections status` counts it; with no retention (`0`, `forever`) they compact nothing.
@Suite struct RetentionTests {
    /// 30 donations in one push, then, once they are older than the retention, 3 more: the
    /// tasks compact through the 30th, the views stay, a rebuild agrees, the heads count it.
    @Test func aWorkerWithAShortRetentionCompactsAnAccountByItselfAndItsViewsStay() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID(), detail: .full)
            var other = DeviceScript(account: UUID(), detail: .full)
            try await log.push(phone, (0..<30).map { phone.donate("soup-\($0 % 5)", at: 1_000 + Int64($0)) })
            try await log.push(other, (0..<5).map { other.donate("tea-\($0)", bundle: "com.example.tea", at: 1_000 + Int64($0)) })
            try await Task.sleep(for: .seconds(2.5))
            try await log.push(phone, (0..<3).map { phone.donate("soup-\($0)", at: 2_000 + Int64($0)) })
            let before = try await store.fullView(account: phone.account, device: phone.deviceId)
            #expect(before == log.expectedView(account: phone.account, device: phone.deviceId))

            var worker = SyncWorker(queue: store, logger: logger, idlePoll: .milliseconds(20))
            // All of a connection's time (share 1): the rest after each look, nine times its time at
            // the default tenth, would on a loaded machine outlast the wait (`theCompactingTaskRestsForItsShare` tests the rest).
            worker.compaction = CompactionSchedule(keepHistory: .seconds(2), minimumEvents: 20, poll: .milliseconds(50), share: 1)
            try await whileRunning(worker) {
                try await eventually("the account is compacted, the other looked at", timeout: .seconds(30)) {
                    let status = try await OperatorStore(client: client, logger: logger).projectionStatus().compaction
                    return status.accountsCompacted == 1 && status.accountsNotLookedAt == 0
                }
            }
            let horizon = try await client.query("SELECT compactions, compacted_events, compacted_bytes FROM account_heads WHERE account_id = \(phone.account)",
                                                 logger: logger).decode((Int64, Int64, Int64).self).collectAll().first
            #expect(horizon?.0 == 1 && (horizon?.1 ?? 0) >= 20 && (horizon?.2 ?? 0) > 0, "\(String(describing: horizon))")
            let left = try await client.query("SELECT count(*) FROM events WHERE account_id = \(phone.account)", logger: logger)
                .decode(Int64.self).collectAll().first ?? 0
            #expect(left == 33 - (horizon?.1 ?? 0) && left < 33)
            #expect(try await store.fullView(account: phone.account, device: phone.deviceId) == before, "compacting changes no view")
            // The other account had too few events to be worth it: looked at, not compacted.
            let others = try await client.query("SELECT compactions, compaction_due_at IS NOT NULL FROM account_heads WHERE account_id = \(other.account)",
                                                logger: logger).decode((Int64, Bool).self).collectAll().first
            #expect(others?.0 == 0 && others?.1 == true)
            let status = try await OperatorStore(client: client, logger: logger).projectionStatus().compaction
            #expect(status.compactions == 1 && status.eventsCompacted == horizon?.1 && status.bytesCompacted == horizon?.2)
            #expect(status.accountsNotLookedAt == 0, "\(status)")
            #expect(try await store.rebuilder.verify().differences == [])

            // The account goes on: a push after the compaction folds over it as before.
            try await log.push(phone, [phone.donate("soup-9", at: 3_000)])
            #expect(try await store.fullView(account: phone.account, device: phone.deviceId)
                    == log.expectedView(account: phone.account, device: phone.deviceId))
        }
    }

    /// `--keep-history 0` (no schedule): the tasks fold, and compact nothing however old.
    @Test func noRetentionCompactsNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID(), detail: .full)
            try await log.push(phone, (0..<30).map { phone.donate("soup-\($0 % 5)", at: 1_000 + Int64($0)) })
            try await Task.sleep(for: .seconds(1.5))
            #expect(CompactionSchedule.keepHistory(parsing: "0") == .success(nil))
            #expect(CompactionSchedule.keepHistory(parsing: "forever") == .success(nil))
            let worker = SyncWorker(queue: store, logger: logger, idlePoll: .milliseconds(20))
            #expect(worker.compaction == nil)
            try await whileRunning(worker) {
                #expect(try await !worker.compactNext())
                try await Task.sleep(for: .seconds(1))
            }
            // The same account with a retention of a second is compacted at the next look.
            var scheduled = worker
            scheduled.compaction = CompactionSchedule(keepHistory: .seconds(1), minimumEvents: 20)
            let status = try await OperatorStore(client: client, logger: logger).projectionStatus().compaction
            #expect(status.compactions == 0 && status.accountsCompacted == 0 && status.accountsNotLookedAt == 1)
            #expect(try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int64.self).collectAll().first == 30)
            #expect(try await scheduled.compactNext())
            #expect(try await OperatorStore(client: client, logger: logger).projectionStatus().compaction.accountsCompacted == 1)
        }
    }

    /// Issue 65, item 2: a compaction that fails (here its check: a live row the fold does not
    /// give) is rolled back, counted on the account's head, and put off by the retry time, doubled
    /// at each failure in a row; the other accounts are compacted meanwhile, and once the account
    /// can be compacted its count starts again.
    @Test func aCompactionThatFailsIsPutOffAndTheOthersGoOn() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var broken = DeviceScript(account: UUID())
            var fine = DeviceScript(account: UUID())
            try await log.push(broken, (0..<30).map { broken.donate("soup-\($0 % 5)", at: 1_000 + Int64($0)) })
            try await log.push(fine, (0..<30).map { fine.donate("tea-\($0 % 5)", bundle: "com.example.tea", at: 1_000 + Int64($0)) })
            try await client.query("""
                UPDATE projection_donation_groups SET donations = donations + 1 WHERE account_id = \(broken.account) AND identifier = 'soup-0'
                """, logger: logger)
            try await Task.sleep(for: .seconds(1.5))
            let schedule = CompactionSchedule(keepHistory: .seconds(1), minimumEvents: 20, retryAfter: .seconds(600))
            func head(_ account: UUID) async throws -> (failures: Int32, dueIn: Double, compactions: Int64)? {
                try await client.query("""
                    SELECT compaction_failures, extract(epoch FROM compaction_due_at - now())::float8, compactions
                    FROM account_heads WHERE account_id = \(account)
                    """, logger: logger).decode((Int32, Double, Int64).self).collectAll().first.map { ($0.0, $0.1, $0.2) }
            }
            var steps: [RetentionStep] = []
            for _ in 0..<3 { steps.append(try await store.compactNextDue(schedule)) }
            #expect(steps.contains { step in
                guard case .failed(let account, let failures, let retryIn, let error) = step else { return false }
                return account == broken.account && failures == 1 && retryIn == .seconds(600) && error is CompactionMismatch
            }, "\(steps)")
            #expect(steps.contains { if case .compacted(let compaction) = $0 { compaction.account == fine.account } else { false } }, "\(steps)")
            // The third step finds nothing of the failed account: idle, or (once, on a loaded
            // machine) the compacted account's next compaction scheduled.
            let takesTheFailed: (RetentionStep) -> Bool = { step in
                switch step {
                case .failed(let account, _, _, _), .scheduled(let account): account == broken.account
                case .compacted(let compaction): compaction.account == broken.account
                case .idle: false
                }
            }
            #expect(steps.filter(takesTheFailed).count == 1, "the failed account is not taken again at once: \(steps)")
            let first = try #require(try await head(broken.account))
            #expect(first.failures == 1 && first.compactions == 0 && (590...600).contains(first.dueIn), "\(first)")
            #expect(try await client.query("SELECT count(*) FROM events WHERE account_id = \(broken.account)", logger: logger)
                .decode(Int64.self).collectAll().first == 30, "the failed compaction removed nothing")

            // The fine account, compacted, is next due a second on (the retention): put off, so
            // that the looks below can only take the broken one (on a loaded machine a look took
            // the fine account once, its second up, and found nothing due).
            try await client.query("UPDATE account_heads SET compaction_due_at = now() + interval '1 hour' WHERE account_id = \(fine.account)",
                                   logger: logger)

            // Its time comes again: the second failure in a row waits twice as long.
            try await client.query("UPDATE account_heads SET compaction_due_at = now() WHERE account_id = \(broken.account)", logger: logger)
            let again = try await store.compactNextDue(schedule)
            guard case .failed(broken.account, 2, .seconds(1_200), let error) = again, error is CompactionMismatch else {
                Issue.record("the second failure: \(again)")
                return
            }
            let second = try #require(try await head(broken.account))
            #expect(second.failures == 2 && (1_190...1_200).contains(second.dueIn), "\(second)")
            #expect(schedule.retry(afterFailures: 7) == .seconds(600 * 64) && schedule.retry(afterFailures: 1_000) == .seconds(600 * 64))

            // Mended, it is compacted at its next look, and its failures start again from 0.
            try await client.query("""
                UPDATE projection_donation_groups SET donations = donations - 1 WHERE account_id = \(broken.account) AND identifier = 'soup-0'
                """, logger: logger)
            try await client.query("UPDATE account_heads SET compaction_due_at = now() WHERE account_id = \(broken.account)", logger: logger)
            let mendedStep = try await store.compactNextDue(schedule)
            guard case .compacted(let compaction) = mendedStep else {
                Issue.record("the mended account was not compacted: \(mendedStep)")
                return
            }
            #expect(compaction.account == broken.account && compaction.outcome == .compacted)
            let mended = try #require(try await head(broken.account))
            #expect(mended.failures == 0 && mended.compactions == 1, "\(mended)")
            #expect(try await store.fullView(account: broken.account, device: broken.deviceId)
                    == log.expectedView(account: broken.account, device: broken.deviceId))
        }
    }

    /// A compaction stopped midway (its process shutting down: its task cancelled) gives its
    /// account's claim back: the account is due again at once, not once the claim's hour is out,
    /// no failure is counted, and nothing of it is removed.
    @Test func aStoppedCompactionGivesItsAccountBack() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID())
            try await log.push(phone, (0..<30).map { phone.donate("soup-\($0 % 5)", at: 1_000 + Int64($0)) })
            try await Task.sleep(for: .seconds(1.5))
            let schedule = CompactionSchedule(keepHistory: .seconds(1), minimumEvents: 20)
            func head() async throws -> (failures: Int32, dueIn: Double, compactions: Int64)? {
                try await client.query("""
                    SELECT compaction_failures, extract(epoch FROM compaction_due_at - now())::float8, compactions
                    FROM account_heads WHERE account_id = \(phone.account)
                    """, logger: logger).decode((Int32, Double, Int64).self).collectAll().first.map { ($0.0, $0.1, $0.2) }
            }
            try await withConnection(url) { holder in
                // The log is held: the compaction claims the account, then waits to read its events.
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("LOCK TABLE events IN ACCESS EXCLUSIVE MODE", logger: logger)
                let compaction = Task { try await store.compactNextDue(schedule) }
                try await eventually("the compaction waits for the log") { try await sessionsWaitingForALock(client) == 1 }
                let claimed = try #require(try await head())
                #expect(claimed.dueIn > 3_500, "claimed for an hour: \(claimed)")
                compaction.cancel()
                let stopped = await compaction.result
                #expect(throws: (any Error).self) { try stopped.get() }
                try await holder.query("ROLLBACK", logger: logger)
            }
            let after = try #require(try await head())
            #expect(after.dueIn <= 0 && after.failures == 0 && after.compactions == 0, "given back, due now: \(after)")
            #expect(try await client.query("SELECT count(*) FROM events WHERE account_id = \(phone.account)", logger: logger)
                .decode(Int64.self).collectAll().first == 30)
            // The next look takes it and compacts it.
            guard case .compacted(let compaction) = try await store.compactNextDue(schedule) else {
                Issue.record("the account given back was not compacted at the next look")
                return
            }
            #expect(compaction.account == phone.account && compaction.outcome == .compacted)
        }
    }

    @Test func retentionsAreReadInDaysHoursMinutesAndSeconds() {
        #expect(CompactionSchedule.keepHistory(parsing: "90d") == .success(.seconds(90 * 86_400)))
        #expect(CompactionSchedule.keepHistory(parsing: "12h") == .success(.seconds(12 * 3_600)))
        #expect(CompactionSchedule.keepHistory(parsing: "30m") == .success(.seconds(1_800)))
        #expect(CompactionSchedule.keepHistory(parsing: "45s") == .success(.seconds(45)))
        for refused in ["", "d", "90", "-1d", "1.5d", "1w", "forever!"] {
            #expect((try? CompactionSchedule.keepHistory(parsing: refused).get()) == nil, "\(refused)")
        }
    }

    /// The compacting task takes at most `share` of one connection's time: after a compaction
    /// that took t it rests t × (1 − share) / share, never less than 10 ms.
    @Test func theCompactingTaskRestsForItsShare() {
        // Within a microsecond: the share is a fraction, and a Duration times a Double rounds.
        func rests(_ schedule: CompactionSchedule, after took: Duration, _ expected: Duration) -> Bool {
            let rest = schedule.rest(after: took)
            return rest > expected - .microseconds(1) && rest < expected + .microseconds(1)
        }
        #expect(CompactionSchedule().share == 0.1)
        #expect(rests(CompactionSchedule(), after: .milliseconds(100), .milliseconds(900)))
        #expect(rests(CompactionSchedule(share: 0.25), after: .milliseconds(100), .milliseconds(300)))
        #expect(rests(CompactionSchedule(share: 0.5), after: .milliseconds(70), .milliseconds(70)))
        #expect(rests(CompactionSchedule(share: 1), after: .milliseconds(70), .milliseconds(10)))
        #expect(rests(CompactionSchedule(share: 0.1), after: .seconds(1), .seconds(9)))
    }
}
