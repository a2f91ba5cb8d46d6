import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Folds the log into the `rebuild` tables beside the live projections, compares the two and
/// promotes the rebuild (DESIGN §6), while pushes and the maintenance tasks go on.
///
/// A rebuild folds account by account (an account's view is a function of its events, so no
/// global order is needed, and memory is bounded by the largest account), in `partitions` ranges
/// of accounts side by side, and bulk-writes the rows. Every account's rebuilt rows record the
/// version they include (`rebuild.projection_accounts.version`); pushes that arrive meanwhile
/// are caught up with afterwards, account by account, by the ordinary fold into the rebuild
/// tables. `verify` does a last catch-up of each account in the transaction that compares it,
/// holding that account's head against its pushes; `promote` one for every account in the
/// transaction that swaps, holding `account_heads` against every push (they wait for it, briefly).
public struct ProjectionRebuilder: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// Accounts a range folds before writing their rows.
    public var accountsPerWrite = 100
    /// Ranges of accounts the account-by-account pass folds side by side.
    public var partitions = ProcessInfo.processInfo.activeProcessorCount
    /// The most events of one account a catch-up folds in one step.
    public var catchUpBatch: Int64 = 10_000
    /// How many times the catch-up outside the final transaction looks again for accounts that
    /// moved meanwhile (what remains is folded under the lock).
    public var catchUpRounds = 3

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    private var store: ProjectionStore { ProjectionStore(client: client, logger: logger) }
    private var rows: ProjectionRowStore { ProjectionRowStore(tables: .rebuild, logger: logger) }
    private var log: PostgresEventStore { PostgresEventStore(client: client, logger: logger) }

    /// Empties the `rebuild` tables and folds the whole log into them, then catches up with the
    /// pushes that came meanwhile. Returns how far it came: the events it folded of the log's
    /// events at its start.
    @discardableResult
    public func rebuild(progress: @escaping @Sendable (RebuildProgress) async -> Void = { _ in }) async throws -> RebuildProgress {
        let total = try await store.eventCount()
        try await rows.reset(client)
        let counter = RebuildCounter(total: total)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for range in AccountRange.split(into: partitions) {
                group.addTask {
                    try await foldAccounts(in: range) { events, accounts in
                        await progress(counter.add(events: events, accounts: accounts))
                    }
                }
            }
            try await group.waitForAll()
        }
        for _ in 0..<catchUpRounds {
            let lag = try await client.withConnection { try await store.rebuildLag(on: $0) }
            guard !lag.isEmpty else { break }
            for account in lag {
                try await client.withConnection { connection in
                    try await connection.inTransaction(logger: logger) { connection in
                        try await catchUp(account, on: connection) { events in await progress(counter.add(events: events, accounts: 1)) }
                    }
                }
            }
        }
        return counter.current
    }

    /// The account-by-account pass of one range: one fold per account from empty rows, written in
    /// bulk every `accountsPerWrite` accounts; tells `folded` how many events and accounts after
    /// every write. The range's events are streamed on one connection, in one snapshot (each
    /// account whole up to its head then), while its rows are written on another: a connection
    /// runs one statement at a time, and the stream's statement only ends once read.
    private func foldAccounts(in range: AccountRange, folded: @Sendable (_ events: Int, _ accounts: Int) async -> Void) async throws {
        let log = log, rows = rows, accountsPerWrite = accountsPerWrite
        try await client.withConnection { reader in
            try await client.withConnection { writer in
                var unreported = 0
                var pending: [UUID: AccountBatchResult] = [:]
                var current: (account: UUID, fold: AccountBatchFold)?

                func finishAccount() throws {
                    guard let (account, fold) = current else { return }
                    pending[account] = try fold.finish()
                    current = nil
                }
                func flush() async throws {
                    guard !pending.isEmpty else { return }
                    try await rows.copy(pending, on: writer)
                    await folded(unreported, pending.count)
                    pending.removeAll(keepingCapacity: true)
                    unreported = 0
                }

                for try await entry in try await log.foldLogByAccount(accounts: range, on: reader) {
                    if entry.accountId != current?.account {
                        try finishAccount()
                        if pending.count >= accountsPerWrite { try await flush() }
                        current = (entry.accountId, AccountBatchFold(before: AccountFoldRows()))
                    }
                    current?.fold.apply(entry.event)
                    unreported += 1
                }
                try finishAccount()
                try await flush()
            }
        }
    }

    /// Folds the account's events after its rebuilt version, up to the head read in `lag`, into
    /// the rebuild tables, in the caller's transaction on `connection`, `catchUpBatch` events at
    /// a time; tells `folded` how many after each step.
    private func catchUp(_ lag: RebuildLag, on connection: PostgresConnection, folded: (Int) async -> Void) async throws {
        var rebuilt = lag.rebuiltVersion
        while rebuilt < lag.version {
            let upper = min(lag.version, rebuilt + catchUpBatch)
            let entries = try await log.readFoldLog(ofAccount: lag.accountId, versions: (rebuilt + 1)...upper, on: connection)
            // Fewer than asked: the account was erased meanwhile, and its rows go at the end.
            guard !entries.isEmpty else { return }
            try await rows.fold(account: lag.accountId, batch: AccountBatch(events: entries.map(\.event), foldedVersion: rebuilt), on: connection)
            rebuilt = upper
            await folded(entries.count)
        }
    }

    /// Rebuilds, then compares the rebuilt rows with the live ones account by account, each in a
    /// transaction of its own that locks its head (its pushes and its maintenance fold wait for
    /// that one account, briefly; pulls do not) and catches its rebuilt rows up to the head: both
    /// sides then stand at the account's head. Accounts whose live rows are behind their head (an
    /// import not folded yet, or parked), or wait for the refold a migration asked for, are not compared. No statement locks a whole table (on
    /// Citus each runs on the account's shard). At most `maxDifferences` differences are listed;
    /// the accounts are all counted.
    public func verify(
        maxDifferences: Int = 100,
        progress: @escaping @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> ProjectionVerification {
        try await rebuild(progress: progress)
        var verification = ProjectionVerification(accountsCompared: 0, accountsBehind: 0, differences: [])
        for account in try await store.accountsWithHeads() {
            try await client.withConnection { connection in
                try await connection.inTransaction(logger: logger) { connection in
                    guard let (lag, folded, refoldPending) = try await store.lockHeadForRebuild(account, on: connection), lag.version > 0 else { return }
                    // Behind its head, or waiting for the refold a migration asked for: its live rows are known to lag.
                    guard folded == lag.version, !refoldPending else {
                        verification.accountsBehind += 1
                        return
                    }
                    verification.accountsCompared += 1
                    let limit = maxDifferences - verification.differences.count
                    guard limit > 0 else { return }
                    try await catchUp(lag, on: connection) { _ in }
                    verification.differences += try await store.differences(account: account, limit: limit, on: connection)
                }
            }
        }
        return verification
    }

    /// The last catch-up, in the caller's transaction on `connection`, which holds `account_heads`
    /// against every push: afterwards every account's rebuilt rows include its head, and those of
    /// accounts erased meanwhile are gone.
    private func finalCatchUp(on connection: PostgresConnection) async throws {
        for lag in try await store.rebuildLag(on: connection) {
            try await catchUp(lag, on: connection) { _ in }
        }
        try await store.dropErasedAccounts(on: connection)
    }

    /// Makes the rebuilt projections the live ones and starts a new epoch: every device's next
    /// pull answers with its whole view. Every account's folded version becomes the version its
    /// rebuilt rows include (its head), so accounts behind and parked ones are current afterwards.
    ///
    /// One transaction locks `account_heads` in exclusive mode (pushes and maintenance tasks wait
    /// for it, and it waits for those in flight: share mode would deadlock with a maintenance task
    /// that holds a head it is about to move), catches the rebuild up to every head and copies it over.
    ///
    /// Not account by account, as `verify` goes: a push's optimistic write (`AppendFoldedStatement`)
    /// checks only the head, which an account's swap leaves as it was, and on one PostgreSQL its
    /// one statement runs on the snapshot it took before it waited for the head, so its removals
    /// would miss the rows the swap inserted meanwhile (seen: a donation group a deletion had
    /// removed came back). The table lock is taken before that statement takes its snapshot. On
    /// Citus the lock is taken on every node, and every push waits for the promotion: an account
    /// by account promotion needs a mark on the head that the optimistic write checks
    /// (docs/citus.md).
    public func promote() async throws {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                // Cross-account: a promotion holds every head still while it swaps.
                try await connection.guardedQuery("LOCK TABLE account_heads IN EXCLUSIVE MODE", logger: logger)
                try await finalCatchUp(on: connection)
                try await store.copyRebuildToLive(on: connection)
            }
        }
        logger.info("the rebuilt projections are live now")
    }
}
