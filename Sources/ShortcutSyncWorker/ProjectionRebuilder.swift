import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Replays the log into the `rebuild` tables beside the live projections, compares the two and
/// promotes the rebuild (DESIGN §6), while the live worker and the service go on.
public struct ProjectionRebuilder: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// How many events a catch-up batch folds.
    public var pageSize = 5000
    /// Accounts the account-by-account pass folds before writing their rows.
    public var accountsPerWrite = 100
    /// Ranges of accounts the account-by-account pass folds side by side.
    public var partitions = 2

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    private var store: ProjectionStore { ProjectionStore(client: client, logger: logger) }
    private var folder: ProjectionFolder { ProjectionFolder(tables: .rebuild, logger: logger) }

    /// Replays the whole log into the `rebuild` tables: first every event below the log's horizon,
    /// account by account (the view is a function of the set of an account's events, so log order
    /// is not needed, and memory is bounded by the largest account), then from the horizon in log
    /// order with the live worker's code. Returns where the replay stopped: the log's committed
    /// end when it read its last page.
    @discardableResult
    public func rebuild(progress: @escaping @Sendable (RebuildProgress) async -> Void = { _ in }) async throws -> LogCheckpoint {
        try await folder.rows.reset(client)
        let processed = try await foldBelowHorizon(progress: progress)
        return try await continueRebuild(processedBefore: processed, progress: progress)
    }

    /// The account-by-account pass: one fold per account from empty rows, written in bulk, in
    /// `partitions` ranges of accounts side by side (each account's events are folded by one of them).
    ///
    /// Each range streams its events on one connection while its rows are written on another: a
    /// connection runs one statement at a time, and the stream's statement only ends once read.
    private func foldBelowHorizon(progress: @escaping @Sendable (RebuildProgress) async -> Void) async throws -> Int {
        let log = PostgresEventStore(client: client, logger: logger)
        let head = try await store.headPosition()
        let (horizon, checkpoint) = try await client.withConnection { try await log.horizon(on: $0) }
        let total = EventCount()
        let processed = try await withThrowingTaskGroup(of: Int.self) { group in
            for range in AccountRange.split(into: partitions) {
                group.addTask {
                    try await foldAccounts(in: range, below: horizon, log: log) { count in
                        let sum = total.add(count)
                        await progress(RebuildProgress(processed: sum, checkpoint: checkpoint, headPosition: head))
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        try await client.withConnection { try await folder.rows.advanceCheckpoint(to: checkpoint, on: $0) }
        return processed
    }

    /// Folds the accounts of one range below the horizon and writes their rows; returns how many
    /// events it folded, telling `folded` how many more after every write.
    private func foldAccounts(
        in range: AccountRange, below horizon: UInt64, log: PostgresEventStore, folded: @Sendable (Int) async -> Void
    ) async throws -> Int {
        try await client.withConnection { reader in
            try await client.withConnection { writer in
                var processed = 0, unreported = 0
                var pending: [UUID: AccountBatchResult] = [:]
                var current: (account: UUID, fold: AccountBatchFold)?

                func finishAccount() throws {
                    guard let (account, fold) = current else { return }
                    pending[account] = try fold.finish()
                    current = nil
                }
                func flush() async throws {
                    try await folder.rows.copy(pending, on: writer)
                    pending.removeAll(keepingCapacity: true)
                    await folded(unreported)
                    unreported = 0
                }

                for try await entry in try await log.foldLogByAccount(below: horizon, accounts: range, on: reader) {
                    if entry.accountId != current?.account {
                        try finishAccount()
                        if pending.count >= accountsPerWrite { try await flush() }
                        current = (entry.accountId, AccountBatchFold(before: AccountFoldRows()))
                    }
                    current?.fold.apply(entry.event)
                    processed += 1
                    unreported += 1
                }
                try finishAccount()
                try await flush()
                return processed
            }
        }
    }

    /// Goes on replaying into the `rebuild` tables from where they stand, in log order, up to
    /// `limit` if given (never past it), else to the log's committed end.
    @discardableResult
    public func continueRebuild(
        through limit: LogCheckpoint? = nil,
        processedBefore: Int = 0,
        progress: @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> LogCheckpoint {
        let log = PostgresEventStore(client: client, logger: logger)
        return try await client.withConnection { connection in
            var checkpoint = try await folder.rows.checkpoint(on: connection).log
            var processed = processedBefore
            while limit.map({ checkpoint < $0 }) ?? true {
                var page = try await log.readFoldLog(after: checkpoint, limit: pageSize)
                if let limit { page.removeAll { $0.checkpoint > limit } }
                guard let last = page.last else {
                    // Nothing is left up to `limit`: every event at or below it was committed
                    // when the live side passed it, so the rest were erased since. The replay
                    // stands where the live side does.
                    if let limit, checkpoint < limit {
                        try await folder.rows.advanceCheckpoint(to: limit, on: connection)
                        checkpoint = limit
                    }
                    break
                }
                try await folder.fold(page, from: checkpoint, on: connection, notify: false)
                checkpoint = last.checkpoint
                processed += page.count
                await progress(RebuildProgress(processed: processed, checkpoint: checkpoint, headPosition: try await store.headPosition()))
            }
            return checkpoint
        }
    }

    /// Rebuilds from the log and compares the result with the live projections at one checkpoint.
    ///
    /// The live side moves while this runs, so the rebuild is brought to exactly the live
    /// checkpoint (or waits, up to `timeout`, for the worker to reach the rebuild's) and both are
    /// read in one snapshot (see `ProjectionStore.differences`).
    public func verify(
        timeout: Duration = .seconds(30),
        maxDifferences: Int = 100,
        progress: @escaping @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> ProjectionVerification {
        try await rebuild(progress: progress)
        let deadline = ContinuousClock.now + timeout
        while true {
            let outcome = try await client.withConnection { connection in
                try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection -> VerifyStep in
                    let (live, rebuilt) = try await store.checkpoints(on: connection)
                    if live == rebuilt {
                        let differences = try await store.differences(limit: maxDifferences, on: connection)
                        return .compared(ProjectionVerification(checkpoint: live, differences: differences))
                    }
                    return live < rebuilt ? .liveBehind(live: live, rebuilt: rebuilt) : .rebuildBehind(live: live)
                }
            }
            switch outcome {
            case .compared(let verification):
                return verification
            case .rebuildBehind(let live):
                try await continueRebuild(through: live, progress: progress)
            case .liveBehind(let live, let rebuilt):
                guard ContinuousClock.now < deadline else {
                    throw ProjectionError.liveProjectionsBehind(live: live, rebuilt: rebuilt)
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    private enum VerifyStep: Sendable {
        case compared(ProjectionVerification)
        /// Bring the rebuild to exactly the live checkpoint.
        case rebuildBehind(live: LogCheckpoint)
        /// Wait for the worker to reach the rebuild's checkpoint.
        case liveBehind(live: LogCheckpoint, rebuilt: LogCheckpoint)
    }

    /// Makes the rebuilt projections the live ones and starts a new epoch: every device's next
    /// pull answers with its whole view.
    ///
    /// One transaction holds the live checkpoint (a running worker waits for it, then goes on
    /// from the same point), brings the rebuild to exactly that checkpoint and copies it over.
    /// When the rebuild has already passed the live side, it waits (up to `timeout`) for the worker.
    public func promote(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        let live = ProjectionRowStore(tables: .live, logger: logger)
        while true {
            do {
                try await client.withConnection { connection in
                    try await connection.inTransaction(logger: logger) { connection in
                        let checkpoint = try await live.checkpoint(on: connection, forUpdate: true)
                        let rebuilt = try await continueRebuild(through: checkpoint.log)
                        guard rebuilt == checkpoint.log else {
                            throw ProjectionError.liveProjectionsBehind(live: checkpoint.log, rebuilt: rebuilt)
                        }
                        try await store.copyRebuildToLive(on: connection)
                    }
                }
                logger.info("the rebuilt projections are live now")
                return
            } catch let error as ProjectionError {
                guard case .liveProjectionsBehind = error, ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
