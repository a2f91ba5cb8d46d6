import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker
import Synchronization

/// `bench rebuild`: how fast the maintenance tasks fold an imported backlog and a rebuild replays
/// the log, beside a raw ordered read of the same log on the same database (DESIGN §8).
///
/// It fills a fresh database with `accounts` histories of `eventsPerAccount` events
/// (`BenchmarkHistory`, pushed and so folded), then times three things over the same log:
/// PostgreSQL reading it in order (the raw figure), the maintenance tasks folding it all again
/// from nothing (every account made behind its head, as after an import), and a rebuild. Peak memory is the
/// process's resident high-water mark, reset before each timed part (Linux `clear_refs`).
public struct RebuildBenchmark: Sendable {
    public struct Shape: Sendable, Hashable, Codable {
        public var accounts: Int
        public var eventsPerAccount: Int
        public var events: Int { accounts * eventsPerAccount }

        public init(accounts: Int, eventsPerAccount: Int) {
            self.accounts = accounts
            self.eventsPerAccount = eventsPerAccount
        }
    }

    /// One timed part of the run.
    public struct Measurement: Sendable, Hashable, Codable {
        public var name: String
        public var events: Int
        public var seconds: Double
        public var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
        /// Peak resident memory of this process during the part, in bytes (nil where unknown).
        public var peakResidentBytes: Int?
    }

    public struct Result: Sendable, Hashable, Codable {
        public var shape: Shape
        public var fill: Measurement
        public var rawOrderedRead: Measurement
        public var catchUp: Measurement
        public var rebuild: Measurement
    }

    public let shape: Shape
    public let database: DatabaseURL
    public let logger: Logger
    /// Told what the run is doing, for progress lines.
    public var report: @Sendable (String) -> Void = { _ in }

    public init(shape: Shape, database: DatabaseURL, logger: Logger) {
        self.shape = shape
        self.database = database
        self.logger = logger
    }

    /// Runs on `database`, which must be empty and migrated.
    public func run() async throws -> Result {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 8), backgroundLogger: logger)
        return try await client.withRunning {
            let fill = try await measure("fill", events: shape.events) { try await fillLog(client) }
            report("filled the log with \(shape.events) events (\(Int(fill.eventsPerSecond)) events/s)")
            let raw = try await readLogInOrder(client)
            report("raw ordered read: \(Int(raw.eventsPerSecond)) events/s")
            try await forgetFolds(client)
            let catchUp = try await measure("maintenance fold", events: shape.events) { try await catchUpWithWorker(client) }
            report("maintenance fold of the backlog: \(Int(catchUp.eventsPerSecond)) events/s")
            let rebuilder = ProjectionRebuilder(client: client, logger: logger)
            let rebuild = try await measure("rebuild", events: shape.events) { try await rebuilder.rebuild() }
            report("rebuild: \(Int(rebuild.eventsPerSecond)) events/s")
            return Result(shape: shape, fill: fill, rawOrderedRead: raw, catchUp: catchUp, rebuild: rebuild)
        }
    }

    private func measure(_ name: String, events: Int, _ body: () async throws -> Void) async throws -> Measurement {
        ResidentMemory.resetPeak()
        let started = ContinuousClock.now
        try await body()
        return Measurement(name: name, events: events, seconds: (ContinuousClock.now - started).inSeconds,
                           peakResidentBytes: ResidentMemory.peak())
    }

    /// Appends every account's history through the event store as live traffic writes it: in
    /// rounds, each account's next 10-event batch per round, by several writers at once, so
    /// that every stretch of the log holds events of every account (interleaved), never one
    /// account's history after another's.
    private func fillLog(_ client: PostgresClient) async throws {
        let store = PostgresEventStore(client: client, logger: logger)
        let accounts = AccountStore(client: client, logger: logger)
        let appended = EventCount()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Progress every 10 s; ends when the writers do (the group is cancelled then).
                while true {
                    try await Task.sleep(for: .seconds(10))
                    report("filling: \(appended.value.load(ordering: .relaxed)) of \(shape.events) events")
                }
            }
            let writers = 8
            for writer in 0..<writers {
                group.addTask {
                    var owned: [(account: UUID, history: BenchmarkHistory, remaining: Int)] = []
                    for accountIndex in stride(from: writer, to: shape.accounts, by: writers) {
                        let account = try await accounts.createAccount(tokenHash: (0..<32).map { _ in UInt8.random(in: .min ... .max) })
                        owned.append((account, BenchmarkHistory(seed: UInt64(accountIndex + 1)), shape.eventsPerAccount))
                    }
                    while owned.contains(where: { $0.remaining > 0 }) {
                        for index in owned.indices where owned[index].remaining > 0 {
                            let (device, events) = owned[index].history.nextBatch(count: min(owned[index].remaining, Self.liveBatch))
                            try await store.append(events, account: owned[index].account, device: device)
                            owned[index].remaining -= events.count
                            appended.value.add(events.count, ordering: .relaxed)
                        }
                    }
                }
            }
            // The writers finish first; then the progress task is all that is left.
            for _ in 0..<writers { try await group.next() }
            group.cancelAll()
        }
    }

    /// Events per push while filling: live traffic's batch (DESIGN §8).
    public static let liveBatch = 10

    /// What PostgreSQL alone costs: every event, whole, in log order, to the client. Read twice,
    /// along the log-order index and by sorting a full scan; the faster counts (PostgreSQL's
    /// planner does not always pick it, and the raw figure should be the best PostgreSQL can do).
    private func readLogInOrder(_ client: PostgresClient) async throws -> Measurement {
        var fastest: Measurement?
        for order in ["account_id, version", "position"] {
            let measurement = try await measure("raw ordered read", events: shape.events) {
                var count = 0
                let rows = try await client.query("""
                    SELECT position, account_id, version, device_id, recorded_at, type, hlc_wall, hlc_counter, body::text
                    FROM events ORDER BY \(unescaped: order)
                    """, logger: logger)
                for try await _ in rows { count += 1 }
                guard count == shape.events else {
                    throw BenchmarkError("the raw read saw \(count) events, not \(shape.events)")
                }
            }
            if fastest.map({ measurement.seconds < $0.seconds }) ?? true { fastest = measurement }
        }
        return fastest!
    }

    /// Makes every account behind its head with nothing folded, as an import of the whole log
    /// would leave it: the live projections are emptied.
    private func forgetFolds(_ client: PostgresClient) async throws {
        try await ProjectionStore(client: client, logger: logger).forgetEveryFold()
    }

    /// Runs the maintenance tasks, one per core, until no account is behind.
    private func catchUpWithWorker(_ client: PostgresClient) async throws {
        let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, tasks: max(2, ProcessInfo.processInfo.activeProcessorCount), idlePoll: .milliseconds(20))
        let store = ProjectionStore(client: client, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.run() }
            var lastReport = ContinuousClock.now
            while true {
                let status = try await store.status()
                if status.accountsBehind == 0 { break }
                try await Task.sleep(for: .milliseconds(20))
                if ContinuousClock.now - lastReport > .seconds(5) {
                    lastReport = ContinuousClock.now
                    report("maintenance: \(status.eventsBehind) events of \(status.accountsBehind) accounts still to fold")
                }
            }
            group.cancelAll()
        }
    }
}

/// Events written so far, shared by the fill's writers and its progress line.
private final class EventCount: Sendable {
    let value = Atomic<Int>(0)
}
