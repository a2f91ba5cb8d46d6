import CoreMetrics
import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// The maintenance tasks (DESIGN §6): pushes fold their own events, so what is left is folding
/// the accounts whose folded version is behind their head — after an `admin import`, or a parked
/// account whose next try is due — and folding again from its first event each account that a
/// migration marked (`refold_pending`: its rows lack what the fold now derives).
///
/// Any number of tasks, in any number of processes, run side by side; none is special. Each takes
/// one account at a time from the queue (`MaintenanceQueue`), which folds up to `batchSize` of its
/// events in one transaction and records the folded version: a task that dies leaves nothing half
/// done, and its account is taken by another. An account whose events cannot
/// be folded is parked (with a growing pause before its next try), and the others go on.
public struct SyncWorker: Service {
    /// The accounts behind their head, and how each is folded (`ProjectionStore` on PostgreSQL).
    public let queue: any MaintenanceQueue
    public let logger: Logger
    /// The most events of one account folded in one transaction.
    public let batchSize: Int
    /// How many tasks take accounts side by side.
    public let tasks: Int
    /// How long an idle task waits for a `nudge()` before it looks again.
    public let idlePoll: Duration
    /// The first and the longest pause before a parked account is tried again.
    public var parkedRetry: (first: Duration, longest: Duration) = (.seconds(1), .seconds(300))
    /// When accounts are compacted by themselves (`--keep-history`); nil: never (history kept forever).
    /// The first task alone compacts, one account a transaction, only when no account is behind,
    /// and rests after each compaction as long as it took (`poll` when none is due).
    public var compaction: CompactionSchedule?

    /// One stream of wake-ups per task: a nudge wakes them all.
    private let wakeups: [AsyncStream<Void>]
    private let wakes: [AsyncStream<Void>.Continuation]

    public init(queue: any MaintenanceQueue, logger: Logger, batchSize: Int = 10_000, tasks: Int = 1, idlePoll: Duration = .milliseconds(500)) {
        precondition(batchSize > 0 && tasks > 0, "a worker folds at least one event with at least one task")
        self.queue = queue
        self.logger = logger
        self.batchSize = batchSize
        self.tasks = tasks
        self.idlePoll = idlePoll
        let streams = (0..<tasks).map { _ in AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }
        wakeups = streams.map(\.stream)
        wakes = streams.map(\.continuation)
    }

    /// Wakes an idle task now: after a push that could not fold (its account is behind), or an import.
    public func nudge() {
        for wake in wakes { wake.yield() }
    }

    /// Folds accounts behind until the task is cancelled or a graceful shutdown begins.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            let metrics = WorkerMetrics()
            await withTaskGroup(of: Void.self) { group in
                for (index, wakeups) in wakeups.enumerated() {
                    group.addTask { await maintain(metrics: metrics, wakeups: wakeups, compacts: index == 0) }
                }
                // The idle poll: a tick into the same streams as the nudges.
                group.addTask { [idlePoll] in
                    while (try? await Task.sleep(for: idlePoll)) != nil { nudge() }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Folds accounts behind, one transaction each, until there is none; then waits for a wake.
    /// A failure of the database is logged and retried after a pause.
    /// `compacts`: this task also compacts accounts due, when none is behind (`compaction`).
    private func maintain(metrics: WorkerMetrics, wakeups: AsyncStream<Void>, compacts: Bool) async {
        var wakeups = wakeups.makeAsyncIterator()
        var delay = Duration.milliseconds(100)
        // The gauge is read once each time the task runs out of work, not at every idle poll.
        var folded = true
        // No compaction before this: the rest after the last one, or the poll after none was due.
        var nextCompaction = ContinuousClock.now
        while !Task.isCancelled {
            do {
                if try await foldNext(metrics: metrics) {
                    delay = .milliseconds(100)
                    folded = true
                    continue
                }
                if folded {
                    metrics.behind.record(try await queue.accountsBehind())
                    folded = false
                }
                if compacts, let compaction, ContinuousClock.now >= nextCompaction {
                    let started = ContinuousClock.now
                    if try await compactNext(compaction, metrics: metrics) {
                        // Throttled: at most `share` of one connection's time goes to compacting.
                        nextCompaction = .now + compaction.rest(after: started.duration(to: .now))
                        continue
                    }
                    nextCompaction = .now + compaction.poll
                }
                guard await wakeups.next() != nil else { return }
            } catch where !Task.isCancelled {
                metrics.errors.increment()
                logger.log(level: .warning, "a maintenance task failed; it goes on after a pause", error: error, metadata: ["retry_in": "\(delay)"])
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                delay = min(delay * 2, .seconds(5))
            } catch {
                return
            }
        }
    }

    /// Takes an account behind and folds up to `batchSize` of its events; false when none is behind.
    public func foldNext() async throws -> Bool {
        try await foldNext(metrics: WorkerMetrics())
    }

    /// Looks at one account due for compaction (`compaction`) and compacts it if its history past
    /// the retention is worth it; false when none is due.
    public func compactNext() async throws -> Bool {
        guard let compaction else { return false }
        return try await compactNext(compaction, metrics: WorkerMetrics())
    }

    private func compactNext(_ schedule: CompactionSchedule, metrics: WorkerMetrics) async throws -> Bool {
        switch try await queue.compactNextDue(schedule, candidates: 8) {
        case .idle:
            return false
        case .scheduled:
            return true
        case .compacted(let compaction):
            if compaction.outcome == .compacted {
                metrics.compactions.increment()
                metrics.compactedEvents.increment(by: compaction.eventsRemoved)
                metrics.compactedBytes.increment(by: Int(compaction.bytesRemoved))
            }
            logger.debug("an account's history past the retention was compacted", metadata: [
                "account": "\(compaction.account)", "outcome": "\(compaction.outcome.rawValue)",
                "horizon": "\(compaction.horizonVersion)", "events_removed": "\(compaction.eventsRemoved)",
            ])
            return true
        case .failed(let account, let failures, let retryIn, let error):
            metrics.compactionFailures.increment()
            logger.log(level: .warning, "an account's compaction failed and was rolled back: it is tried again later, the others go on",
                       error: error, metadata: [
                           "account": "\(account)", "failures_in_a_row": "\(failures)", "retry_in": "\(retryIn)",
                       ])
            return true
        }
    }

    private func foldNext(metrics: WorkerMetrics) async throws -> Bool {
        switch try await queue.foldNextBehind(batchSize: batchSize, parkedRetry: parkedRetry) {
        case .idle:
            return false
        case .folded(_, let events):
            metrics.events.increment(by: events)
            metrics.accounts.increment()
        case .parked(let account, let version, let error):
            metrics.errors.increment()
            logger.log(level: .error, "an account's events could not be folded: it is parked, the others go on", error: error, metadata: [
                "account": "\(account)", "version": "\(version)",
            ])
        }
        return true
    }
}
