import Foundation
import Histogram
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker

/// `bench compact` (issue 58, item 5): what compacting an account's history saves and costs.
///
/// 1. **One heavy account** (a database of its own holding only it): three devices donate
///    `donations` times to 50 shortcuts, in 10-event pushes (live traffic's); its bytes in PostgreSQL before and
///    after a compaction at its head, and the compaction's speed (events removed a second).
/// 2. **Many accounts** (another database): `accounts` accounts × `eventsPerAccount` events
///    (`BenchmarkHistory`, 10-event pushes, interleaved); a rebuild of them uncompacted; other
///    accounts' pushes (10 events each, `pushers` at once, through the event store: the service's
///    push without HTTP; their own accounts never due for compaction) for `pushSeconds` without
///    compaction, then while the maintenance tasks
///    (`SyncWorker`, retention 1 s) compact every one of the accounts; then a short tail of
///    `tailEvents` events pushed to each, and a rebuild of the compacted accounts with their tails
///    (each rebuild after a `VACUUM ANALYZE`).
public struct CompactBenchmark: Sendable {
    public struct Load: Sendable, Hashable, Codable {
        public var donations = 30_000
        public var accounts = 1_000
        public var eventsPerAccount = 300
        public var tailEvents = 10
        public var pushers = 4
        public var pushSeconds = 10.0
        /// The most of one connection's time the maintenance tasks' compacting takes (`CompactionSchedule.share`).
        public var compactionShare = CompactionSchedule.defaultShare
        /// The heavy account alone (part 1): its bytes, and the compaction's time and memory.
        public var heavyOnly = false

        public init() {}

        /// Small sizes, to check that it works.
        public static let smoke: Load = {
            var load = Load()
            load.donations = 2_000
            load.accounts = 20
            load.eventsPerAccount = 100
            load.tailEvents = 5
            load.pushers = 2
            load.pushSeconds = 1
            return load
        }()
    }

    /// An account's bytes in PostgreSQL.
    public struct Bytes: Sendable, Hashable, Codable {
        /// Its rows' stored size (`pg_column_size` of each row of every table that holds it).
        public var rows: Int64
        /// Of which its log's (`events`).
        public var eventRows: Int64
        /// Every table's and index's size on disk in a database holding only it, after VACUUM FULL.
        public var relations: Int64
        public var events: Int64
    }

    public struct Pushes: Sendable, Hashable, Codable {
        public var count: Int
        public var seconds: Double
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
    }

    public struct Result: Sendable, Hashable, Codable {
        public var load: Load
        public var before: Bytes
        public var after: Bytes
        public var eventsRemoved: Int
        public var compactionSeconds: Double
        /// How long of it the compaction held the account's head (its second step), which the
        /// account's pushes wait for.
        public var headHeldSeconds: Double = 0
        /// This process's resident memory when the compaction began, and its high-water mark
        /// during it (Linux; nil elsewhere): what folding the account's history cost it.
        public var residentBeforeCompaction: Int?
        public var peakResidentDuringCompaction: Int?
        public var removedPerSecond: Double { compactionSeconds > 0 ? Double(eventsRemoved) / compactionSeconds : 0 }
        /// The rebuild of the accounts uncompacted, then compacted with their tails (seconds).
        public var rebuildUncompactedSeconds: Double
        public var rebuildCompactedSeconds: Double
        public var rebuildRatio: Double { rebuildCompactedSeconds > 0 ? rebuildUncompactedSeconds / rebuildCompactedSeconds : 0 }
        /// What the maintenance tasks removed from the many accounts, and in how long.
        public var backgroundEventsRemoved: Int64
        public var backgroundSeconds: Double
        public var pushesWithout: Pushes
        public var pushesDuring: Pushes
        public var p99Ratio: Double { pushesWithout.p99Milliseconds > 0 ? pushesDuring.p99Milliseconds / pushesWithout.p99Milliseconds : 0 }
    }

    public let load: Load
    public let server: DatabaseURL
    public let logger: Logger
    public var report: @Sendable (String) -> Void = { _ in }

    public init(load: Load, server: DatabaseURL, logger: Logger) {
        self.load = load
        self.server = server
        self.logger = logger
    }

    /// Runs in two scratch databases on `server`, dropped afterwards.
    public func run() async throws -> Result {
        report("one account, \(load.donations) donations by 3 devices to 50 shortcuts (a database of its own):")
        let heavy = try await inScratchDatabase { try await heavyAccount($0) }
        report(String(format: "one account, %d donations: %.1f MB of rows before, %.1f kB after; %d events removed in %.2f s, the head held %.3f s of it; resident %.1f MB, at most %.1f MB during it",
                      load.donations, Double(heavy.before.rows) / 1e6, Double(heavy.after.rows) / 1e3, heavy.removed, heavy.seconds, heavy.headHeld,
                      Double(heavy.resident ?? 0) / 1e6, Double(heavy.peak ?? 0) / 1e6))
        var result = load.heavyOnly ? Result.nothing(load) : try await inScratchDatabase { try await manyAccounts($0) }
        result.before = heavy.before
        result.after = heavy.after
        result.eventsRemoved = heavy.removed
        result.compactionSeconds = heavy.seconds
        result.headHeldSeconds = heavy.headHeld
        result.residentBeforeCompaction = heavy.resident
        result.peakResidentDuringCompaction = heavy.peak
        return result
    }

    private func inScratchDatabase<T: Sendable>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        let url = server.with(database: "shortcut_sync_bench_\(UInt32.random(in: 0...UInt32.max))")
        try await url.createDatabaseIfMissing(logger: logger)
        do {
            try await Migrator.migrate(url, logger: logger)
            let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 12), backgroundLogger: logger)
            let value = try await client.withRunning { try await body(client) }
            try await url.dropDatabase(logger: logger)
            return value
        } catch {
            try? await url.dropDatabase(logger: logger)
            throw error
        }
    }

    // MARK: One heavy account

    private func heavyAccount(_ client: PostgresClient) async throws
        -> (before: Bytes, after: Bytes, removed: Int, seconds: Double, headHeld: Double, resident: Int?, peak: Int?) {
        let account = try await AccountStore(client: client, logger: logger).createAccount(tokenHash: (0..<32).map { _ in UInt8.random(in: .min ... .max) })
        let store = PostgresEventStore(client: client, logger: logger)
        let devices = (0..<3).map { _ in UUID() }
        var seqs = [Int64](repeating: 0, count: 3)
        var wall: Int64 = 1_763_712_000_000
        var random = SplitMix64(state: 58)
        var pushed = 0
        while pushed < load.donations {
            let index = pushed / RebuildBenchmark.liveBatch % 3
            let count = min(RebuildBenchmark.liveBatch, load.donations - pushed)
            let events = (0..<count).map { _ -> Event in
                seqs[index] += 1
                wall += Int64.random(in: 1...40, using: &random)
                let shortcut = Int.random(in: 0..<50, using: &random)
                return Event(seq: seqs[index], hlc: HLCTimestamp(wallMillis: wall, counter: 0), body: .donation(Donation(
                    bundleId: shortcut < 25 ? "com.example.soup" : "com.example.coffee", identifier: "item-\(shortcut % 25)", kind: .intent,
                    intentType: "OrderIntent", title: "Order item \(shortcut)", keywords: ["order", "lunch"],
                    parameters: ["size": .string("large"), "count": .number(Double(Int.random(in: 1...3, using: &random)))])))
            }
            _ = try await store.append(events, account: account, device: devices[index])
            pushed += count
        }
        let before = try await bytes(of: account, client)
        let projections = ProjectionStore(client: client, logger: logger)
        let head = try await projections.head(account: account).version
        ResidentMemory.resetPeak()
        let resident = ResidentMemory.peak()
        let started = ContinuousClock.now
        let compaction = try await projections.compact(account: account, through: head)
        let seconds = (ContinuousClock.now - started).inSeconds
        let peak = ResidentMemory.peak()
        guard compaction.outcome == .compacted else { throw BenchmarkError("the compaction at the head: \(compaction.outcome)") }
        return (before, try await bytes(of: account, client), compaction.eventsRemoved, seconds, compaction.headHeld.inSeconds, resident, peak)
    }

    /// The account's bytes: its rows in every table that holds it, and (the database holding only
    /// it) every relation's size after VACUUM FULL.
    private func bytes(of account: UUID, _ client: PostgresClient) async throws -> Bytes {
        let tables = ["events", "projection_accounts", "projection_devices", "projection_shortcuts", "projection_voice_shortcuts",
                      "projection_donation_groups", "projection_deletion_marks", "account_heads"]
            + ["projection_accounts", "projection_devices", "projection_shortcuts", "projection_voice_shortcuts",
               "projection_donation_groups", "projection_deletion_marks"].map { "snapshot.\($0)" }
        var rows: Int64 = 0, eventRows: Int64 = 0
        for table in tables {
            let size = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT coalesce(sum(pg_column_size(t.*)), 0)::int8 FROM \(table) t WHERE t.account_id = $1
                """, binds: { var binds = PostgresBindings(); binds.append(account); return binds }()), logger: logger)
                .decode(Int64.self).collectAll().first ?? 0
            rows += size
            if table == "events" { eventRows = size }
        }
        try await vacuumFully(client)
        let relations = try await client.query("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND n.nspname IN ('public', 'snapshot', 'rebuild')
            """, logger: logger).decode(Int64.self).collectAll().first ?? 0
        let events = try await client.query("SELECT count(*) FROM events WHERE account_id = \(account)", logger: logger)
            .decode(Int64.self).collectAll().first ?? 0
        return Bytes(rows: rows, eventRows: eventRows, relations: relations, events: events)
    }

    /// VACUUM FULL until it kept no dead event (`pgstattuple`'s count of the events table's dead
    /// tuples is 0). A snapshot that held the compaction's deleted events back from it (seen twice
    /// in a row in the full suite, with another compaction bench in a database of the same cluster:
    /// the relations' size after a compaction above the size before it, every deleted event kept)
    /// is waited out. Where `pgstattuple` cannot be made (not a superuser), one VACUUM FULL as before.
    private func vacuumFully(_ client: PostgresClient) async throws {
        let counted = (try? await client.query("CREATE EXTENSION IF NOT EXISTS pgstattuple", logger: logger)) != nil
        for attempt in 1...20 {
            try await waitForNoOlderSnapshot(client)
            try await client.query("VACUUM FULL", logger: logger)
            guard counted else { return }
            let dead = try await client.query("SELECT dead_tuple_count FROM pgstattuple('events')", logger: logger)
                .decode(Int64.self).collectAll().first ?? 0
            if dead == 0 { return }
            if attempt < 20 { try await Task.sleep(for: .milliseconds(500)) }
        }
        throw BenchmarkError("the events table kept dead events after twenty full vacuums: another session held a snapshot; the sizes would not be the account's")
    }

    /// Waits (at most a minute) until no other session of this database holds a snapshot, so that
    /// VACUUM FULL leaves no deleted row behind: an autovacuum worker's ANALYZE that began before
    /// the compaction would otherwise keep every row the compaction deleted (seen on a loaded
    /// machine: the relations' size after a compaction above the size before it).
    private func waitForNoOlderSnapshot(_ client: PostgresClient) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let holders = try await client.query("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)
                """, logger: logger).decode(Int64.self).collectAll().first ?? 0
            if holders == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchmarkError("another session of the scratch database held a snapshot for a minute: its size after VACUUM FULL would not be the account's")
    }

    // MARK: Many accounts

    private func manyAccounts(_ client: PostgresClient) async throws -> Result {
        let accountStore = AccountStore(client: client, logger: logger)
        let store = PostgresEventStore(client: client, logger: logger)
        var histories: [(account: UUID, history: BenchmarkHistory)] = []
        for index in 0..<load.accounts {
            histories.append((try await accountStore.createAccount(tokenHash: (0..<32).map { _ in UInt8.random(in: .min ... .max) }),
                              BenchmarkHistory(seed: UInt64(index + 1))))
        }
        // In rounds, each account's next 10-event batch a round, by 8 writers at once: the log interleaves them.
        for _ in 0..<(load.eventsPerAccount / RebuildBenchmark.liveBatch) {
            var batches: [(account: UUID, device: UUID, events: [Event])] = []
            for index in histories.indices {
                let (device, events) = histories[index].history.nextBatch(count: RebuildBenchmark.liveBatch)
                batches.append((histories[index].account, device, events))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    let mine = stride(from: writer, to: batches.count, by: 8).map { batches[$0] }
                    group.addTask { for batch in mine { _ = try await store.append(batch.events, account: batch.account, device: batch.device) } }
                }
                try await group.waitForAll()
            }
        }
        report("\(load.accounts) accounts × \(load.eventsPerAccount) events filled")
        let rebuilder = ProjectionRebuilder(client: client, logger: logger)
        // Each rebuild on vacuumed tables: the second's would otherwise pass over the compactions'
        // dead rows, which autovacuum removes in its own time.
        try await client.query("VACUUM ANALYZE", logger: logger)
        var started = ContinuousClock.now
        _ = try await rebuilder.rebuild()
        let uncompacted = (ContinuousClock.now - started).inSeconds
        report(String(format: "rebuild, uncompacted: %.2f s (%.0f accounts/s)", uncompacted, Double(load.accounts) / uncompacted))

        let without = try await pushes(client, while: { try await Task.sleep(for: .seconds(load.pushSeconds)) })
        report(String(format: "other accounts' pushes without compaction: p50 %.2f ms, p99 %.2f ms (%d pushes)",
                      without.p50Milliseconds, without.p99Milliseconds, without.count))
        try await Task.sleep(for: .seconds(1))
        let worker = {
            var worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, idlePoll: .milliseconds(20))
            worker.compaction = CompactionSchedule(keepHistory: .seconds(1), minimumEvents: max(1, load.eventsPerAccount / 2), poll: .milliseconds(20),
                                                   share: load.compactionShare)
            return worker
        }()
        let operators = OperatorStore(client: client, logger: logger)
        func allCompacted() async throws -> Bool {
            try await operators.projectionStatus().compaction.accountsCompacted >= Int64(load.accounts)
        }
        started = ContinuousClock.now
        // The pushes are timed for as long as those without compaction were (at most): a longer
        // window holds more of the disk's flush stalls, with or without compaction. The
        // compaction then goes on to the last account.
        let during = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.run() }
            let during = try await pushes(client, while: {
                let until = ContinuousClock.now + .seconds(without.seconds)
                while ContinuousClock.now < until, try await !allCompacted() { try await Task.sleep(for: .milliseconds(50)) }
            })
            while try await !allCompacted() { try await Task.sleep(for: .milliseconds(50)) }
            group.cancelAll()
            return during
        }
        let background = (ContinuousClock.now - started).inSeconds
        let totals = try await operators.projectionStatus().compaction
        report(String(format: "while the maintenance tasks compacted %d accounts (%lld events removed, %.1f s, pushes timed the first %.1f s): p50 %.2f ms, p99 %.2f ms (%d pushes)",
                      load.accounts, totals.eventsCompacted, background, during.seconds, during.p50Milliseconds, during.p99Milliseconds, during.count))

        // The pushers' accounts go: the second rebuild is of the same accounts as the first.
        let pushers = try await client.query("""
            SELECT account_id FROM account_heads EXCEPT SELECT account_id FROM unnest(\(histories.map(\.account))::uuid[]) AS h(account_id)
            """, logger: logger).decode(UUID.self).collectAll()
        for account in pushers { _ = try await operators.erase(account: account) }
        for var entry in histories {
            let (device, events) = entry.history.nextBatch(count: load.tailEvents)
            _ = try await store.append(events, account: entry.account, device: device)
        }
        try await client.query("VACUUM ANALYZE", logger: logger)
        started = ContinuousClock.now
        _ = try await rebuilder.rebuild()
        let compacted = (ContinuousClock.now - started).inSeconds
        report(String(format: "rebuild, compacted with %d-event tails: %.2f s (%.0f accounts/s)", load.tailEvents, compacted, Double(load.accounts) / compacted))
        let verified = try await rebuilder.verify()
        guard verified.differences.isEmpty else { throw BenchmarkError("verify after the compactions: \(verified.differences.count) differences") }
        let zero = Bytes(rows: 0, eventRows: 0, relations: 0, events: 0)
        return Result(load: load, before: zero, after: zero, eventsRemoved: 0, compactionSeconds: 0, rebuildUncompactedSeconds: uncompacted,
                      rebuildCompactedSeconds: compacted, backgroundEventsRemoved: totals.eventsCompacted, backgroundSeconds: background,
                      pushesWithout: without, pushesDuring: during)
    }

    /// Pushes of 10 donations to fresh accounts of their own by `load.pushers` pushers while `body` runs.
    private func pushes(_ client: PostgresClient, while body: () async throws -> Void) async throws -> Pushes {
        let store = PostgresEventStore(client: client, logger: logger)
        let accounts = AccountStore(client: client, logger: logger)
        var owned: [UUID] = []
        for _ in 0..<load.pushers {
            let account = try await accounts.createAccount(tokenHash: (0..<32).map { _ in UInt8.random(in: .min ... .max) })
            // Never due: the maintenance tasks compact the other accounts, not the pushers' own (a
            // push waits for a compaction of its own account, which holds its head).
            try await client.query("UPDATE account_heads SET compaction_due_at = 'infinity' WHERE account_id = \(account)", logger: logger)
            owned.append(account)
        }
        let started = ContinuousClock.now
        let histogram = try await withThrowingTaskGroup(of: Histogram<UInt64>.self) { group in
            for (index, account) in owned.enumerated() {
                group.addTask {
                    var histogram = PushTally.newHistogram()
                    var history = BenchmarkHistory(seed: UInt64(1_000_000 + index))
                    while !Task.isCancelled {
                        let (device, events) = history.nextBatch(count: RebuildBenchmark.liveBatch)
                        let start = ContinuousClock.now
                        do {
                            _ = try await store.append(events, account: account, device: device)
                        } catch where Task.isCancelled {
                            break
                        }
                        histogram.record(UInt64(max(1, (ContinuousClock.now - start).inSeconds * 1_000_000)))
                    }
                    return histogram
                }
            }
            // The body ends first; then the pushers are stopped.
            defer { group.cancelAll() }
            try await body()
            group.cancelAll()
            var all = PushTally.newHistogram()
            for try await part in group { all.add(part) }
            return all
        }
        return Pushes(count: Int(histogram.totalCount), seconds: (ContinuousClock.now - started).inSeconds,
                      p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000, p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000)
    }
}

extension CompactBenchmark.Result {
    /// The heavy account's part alone (`Load.heavyOnly`): the many accounts' figures zero.
    static func nothing(_ load: CompactBenchmark.Load) -> Self {
        let zero = CompactBenchmark.Bytes(rows: 0, eventRows: 0, relations: 0, events: 0)
        let none = CompactBenchmark.Pushes(count: 0, seconds: 0, p50Milliseconds: 0, p99Milliseconds: 0)
        return Self(load: load, before: zero, after: zero, eventsRemoved: 0, compactionSeconds: 0, rebuildUncompactedSeconds: 0,
                    rebuildCompactedSeconds: 0, backgroundEventsRemoved: 0, backgroundSeconds: 0, pushesWithout: none, pushesDuring: none)
    }
}
