import CoreMetrics
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Follows the event log and folds it into the per-device projections (DESIGN §6).
///
/// Any number of workers may run against one database; one is active at a time. Each holds a
/// connection of its own and tries for a session advisory lock on it: the one that gets it folds
/// batches on that same connection, the others stay on standby and try again every
/// `standbyPoll`. When the active worker dies, its connection closes, PostgreSQL releases the
/// lock and a standby worker takes over from the checkpoint. Projections and checkpoint are
/// written in one transaction, so a crash anywhere neither loses nor doubles an event's effect.
///
/// `run()` may be called once per instance; make a new worker to start again.
public struct SyncWorker: Service {
    /// What the worker is doing now.
    public enum Role: String, Sendable, Hashable {
        case stopped, connecting, standby, active
    }

    /// The session advisory lock that makes one worker the active one: "SSWORK".
    public static let advisoryLockKey: Int64 = 0x5353_574F_524B

    public let client: PostgresClient
    public let connectionConfiguration: PostgresConnection.Configuration
    public let logger: Logger
    /// The most events read from the log and folded in one transaction.
    public let batchSize: Int
    /// How long an idle worker waits for a `nudge()` before it looks at the log again.
    public let idlePoll: Duration
    /// How often a standby worker tries for the lock.
    public var standbyPoll: Duration = .milliseconds(500)
    /// The first and the longest pause before reconnecting after a failure.
    public var reconnectDelay: (first: Duration, longest: Duration) = (.milliseconds(100), .seconds(5))
    /// How often the worker looks for parked accounts due for another try, and the first and
    /// longest pause between two tries of one account.
    public var parkedRetry: (check: Duration, first: Duration, longest: Duration) = (.seconds(1), .seconds(1), .seconds(300))

    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let state = WorkerState()

    public init(
        client: PostgresClient,
        connectionConfiguration: PostgresConnection.Configuration,
        logger: Logger,
        batchSize: Int = 10_000,
        idlePoll: Duration = .milliseconds(50)
    ) {
        self.client = client
        self.connectionConfiguration = connectionConfiguration
        self.logger = logger
        self.batchSize = batchSize
        self.idlePoll = idlePoll
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakeups = wakeups
        self.wake = wake
    }

    /// A worker whose own connection goes to the database of `databaseURL`.
    public init(client: PostgresClient, databaseURL: DatabaseURL, logger: Logger, batchSize: Int = 10_000,
                idlePoll: Duration = .milliseconds(50)) throws {
        self.init(client: client, connectionConfiguration: try databaseURL.connectionConfiguration(), logger: logger,
                  batchSize: batchSize, idlePoll: idlePoll)
    }

    /// Wakes an idle worker now: the push handler calls it after an append, so devices do not
    /// wait for the next poll.
    public func nudge() {
        wake.yield()
    }

    public var role: Role { state.role }

    /// Follows the log until the task is cancelled or a graceful shutdown begins; returns then.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            let metrics = WorkerMetrics()
            await withTaskGroup(of: Void.self) { group in
                // The idle poll: a tick into the same stream as the nudges, so the loop waits on one thing.
                group.addTask { [wake, idlePoll] in
                    while (try? await Task.sleep(for: idlePoll)) != nil { wake.yield() }
                }
                await follow(metrics: metrics)
                group.cancelAll()
            }
            state.role = .stopped
            metrics.recordActive(false)
        }
    }

    /// Connects, and reconnects after every failure, until cancelled.
    private func follow(metrics: WorkerMetrics) async {
        var wakeups = wakeups.makeAsyncIterator()
        var delay = reconnectDelay.first
        while !Task.isCancelled {
            state.role = .connecting
            var connection: PostgresConnection?
            do {
                let opened = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 1, logger: logger)
                connection = opened
                try await work(on: opened, wakeups: &wakeups, delay: &delay, metrics: metrics)
            } catch {
                if !Task.isCancelled {
                    metrics.recordFailure()
                    logger.log(level: .warning, "sync worker failed; reconnecting", error: error, metadata: ["retry_in": "\(delay)"])
                }
            }
            metrics.recordActive(false)
            // Closing the connection releases the advisory lock for a standby worker.
            if let connection { try? await connection.untilClosed { try await $0.close() } }
            guard !Task.isCancelled, (try? await Task.sleep(for: delay)) != nil else { break }
            delay = min(delay * 2, reconnectDelay.longest)
        }
    }

    /// Waits for the lock on `connection`, then folds the log until cancelled or a failure.
    private func work(
        on connection: PostgresConnection,
        wakeups: inout AsyncStream<Void>.Iterator,
        delay: inout Duration,
        metrics: WorkerMetrics
    ) async throws {
        while try await !tryLock(on: connection) {
            if state.role != .standby {
                state.role = .standby
                logger.info("sync worker on standby: another worker holds the lock")
            }
            delay = reconnectDelay.first
            try await Task.sleep(for: standbyPoll)
        }
        state.role = .active
        metrics.recordActive(true)
        logger.info("sync worker is active")

        let store = ProjectionStore(client: client, logger: logger)
        let folder = ProjectionFolder(tables: .live, logger: logger)
        try await folder.rows.prepareSession(connection)
        let log = PostgresEventStore(client: client, logger: logger)
        var checkpoint = try await store.checkpoint().log
        // The next batch, when it was read while the last one was folded.
        var prefetched: [FoldLogEntry]?
        var nextParkedCheck = ContinuousClock.now
        while !Task.isCancelled {
            if ContinuousClock.now >= nextParkedCheck {
                try await retryParkedAccounts(folder: folder, log: log, on: connection, metrics: metrics)
                nextParkedCheck = ContinuousClock.now + parkedRetry.check
            }
            // A session the server ended while it was idle is only noticed here: a query on it
            // would not always fail promptly.
            guard !connection.isClosed else { throw SyncWorkerError.connectionClosed }
            let events: [FoldLogEntry]
            if let batch = prefetched {
                events = batch
            } else {
                events = try await log.readFoldLog(after: checkpoint, limit: batchSize)
            }
            prefetched = nil
            guard let last = events.last else {
                metrics.record(lag: try await store.headPosition() - checkpoint.position, checkpoint: checkpoint)
                guard await wakeups.next() != nil else { return }
                continue
            }
            // A full batch says more is waiting: read it (on another connection) while this one is folded.
            async let following: [FoldLogEntry]? = events.count == batchSize ? log.readFoldLog(after: last.checkpoint, limit: batchSize) : nil
            let started = ContinuousClock.now
            let notifications: [ProjectionNotification]
            do {
                // A batch that failed here before is folded account by account: the accounts
                // that fail alone are parked, the others go on.
                let isolating = state.failedBatch == checkpoint
                notifications = try await folder.fold(events, from: checkpoint, on: connection, notify: true, isolating: isolating)
            } catch ProjectionError.checkpointMoved(let expected, let found) {
                // Something else (a promoted rebuild, a worker that should not be) moved it: follow it.
                logger.warning("the projection checkpoint moved under the worker", metadata: [
                    "expected": "\(expected)", "found": "\(found)",
                ])
                checkpoint = found
                _ = try? await following
                continue
            } catch where !Task.isCancelled && !(error is CancellationError) && !DatabaseAvailability.isUnavailable(error) {
                // Not the database going away: something in these events. The batch is retried
                // after a backoff; say which one, so an operator can look at it.
                metrics.recordFailure()
                let retried = state.failedBatch == checkpoint
                state.failedBatch = checkpoint
                logger.log(level: .error, retried ? "a batch of the log could not be folded account by account either; retrying it after a pause"
                                                  : "a batch of the log could not be folded; retrying it account by account after a pause", error: error, metadata: [
                    "first_position": "\(events.first!.checkpoint.position)", "last_position": "\(last.checkpoint.position)",
                    "events": "\(events.count)",
                ])
                _ = try? await following
                throw error
            }
            checkpoint = last.checkpoint
            state.failedBatch = nil
            prefetched = try await following
            delay = reconnectDelay.first
            metrics.recordBatch(events: events.count, notifications: notifications.count, duration: ContinuousClock.now - started)
            metrics.record(lag: try await store.headPosition() - checkpoint.position, checkpoint: checkpoint)
            logger.debug("folded a batch", metadata: [
                "events": "\(events.count)", "checkpoint": "\(checkpoint)", "notified_accounts": "\(notifications.count)",
            ])
        }
    }

    /// Tries each parked account that is due again, from its whole log; one that still fails
    /// waits twice as long before its next try (up to `parkedRetry.longest`).
    private func retryParkedAccounts(folder: ProjectionFolder, log: PostgresEventStore, on connection: PostgresConnection, metrics: WorkerMetrics) async throws {
        for parked in try await folder.rows.parkedAccountsDue(on: connection) {
            do {
                let notification = try await folder.unpark(parked.accountId, log: log, on: connection)
                logger.notice("a parked account folds again: its devices get their whole view", metadata: [
                    "account": "\(parked.accountId)", "attempts": "\(parked.attempts)", "version": "\(notification.version)",
                ])
            } catch where !Task.isCancelled && !DatabaseAvailability.isUnavailable(error) {
                let delay = min(parkedRetry.first * (1 << min(parked.attempts, 20)), parkedRetry.longest)
                try await folder.rows.deferParked(parked.accountId, error: String(describing: error), retryIn: delay, on: connection)
                logger.log(level: .warning, "a parked account still cannot be folded", error: error, metadata: [
                    "account": "\(parked.accountId)", "attempts": "\(parked.attempts + 1)", "retry_in": "\(delay)",
                ])
            }
        }
        metrics.parkedAccounts.record(try await folder.rows.parkedAccounts(on: connection).count)
    }

    private func tryLock(on connection: PostgresConnection) async throws -> Bool {
        try await connection.tryAdvisoryLock(Self.advisoryLockKey, logger: logger)
    }
}
