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
/// holding that account's head against its pushes; `promote` one in the transaction that swaps
/// the account's rows, holding its head the same way (its pushes wait for it, briefly; no other
/// account's push waits).
public struct ProjectionRebuilder: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// Accounts a range folds before writing their rows.
    public var accountsPerWrite = 100
    /// Ranges of accounts the account-by-account pass folds side by side.
    public var partitions = ProcessInfo.processInfo.activeProcessorCount
    /// The most events of one account a catch-up folds in one step.
    public var catchUpBatch: Int64 = 10_000
    /// How many times the catch-up after the rebuild's pass looks again for accounts that moved
    /// meanwhile (what remains is folded under each account's head lock, by `verify` or
    /// `promote`), and how many more rounds a promotion makes for accounts made meanwhile.
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
        // Compacted accounts start from their snapshots; the pass folds their events after the horizon.
        let compacted = try await store.seedRebuildFromSnapshots()
        let counter = RebuildCounter(total: total)
        let gate = ConnectionPairGate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for range in AccountRange.split(into: partitions) {
                group.addTask {
                    try await foldAccounts(in: range, compacted: compacted, gate: gate) { events, accounts in
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
    /// runs one statement at a time, and the stream's statement only ends once read. A compacted
    /// account (in `compacted`, with its horizon version), whose snapshot the rebuild tables hold
    /// already, has only its events after the horizon read, and folded over those rows as a
    /// catch-up folds them (`ProjectionRowStore.fold`), once the stream has passed it. The two
    /// connections are taken through `gate`, one range at a time: on a pool with fewer than two
    /// connections a range, ranges take turns (a verify on a test's pool of two once waited for
    /// ever, each of its two ranges holding one connection and waiting for a second).
    private func foldAccounts(
        in range: AccountRange, compacted: [UUID: Int64], gate: ConnectionPairGate,
        folded: @Sendable (_ events: Int, _ accounts: Int) async -> Void
    ) async throws {
        let log = log, rows = rows, accountsPerWrite = accountsPerWrite
        let pass = await gate.enter()
        defer { pass.leave() }
        try await client.withConnection { reader in
            try await client.withConnection { writer in
                pass.leave()
                var unreported = 0
                var pending: [UUID: AccountBatchResult] = [:]
                var current: (account: UUID, fold: AccountBatchFold)?
                // Compacted accounts' events after their horizons, with the horizons: the last one's
                // still being read, and those read whole, folded at the next write.
                var tail: (account: UUID, horizon: Int64, events: [FoldEvent])?
                var tails: [(account: UUID, horizon: Int64, events: [FoldEvent])] = []

                func finishAccount() throws {
                    guard let (account, fold) = current else { return }
                    pending[account] = try fold.finish()
                    current = nil
                }
                func finishTail() {
                    guard let finished = tail else { return }
                    tails.append(finished)
                    tail = nil
                }
                func flush() async throws {
                    if !tails.isEmpty {
                        // In one transaction: a commit per account would wait for the disk each time.
                        try await writer.inTransaction(logger: logger) { writer in
                            for (account, horizon, events) in tails {
                                try await rows.fold(account: account, batch: AccountBatch(events: events, foldedVersion: horizon), on: writer)
                            }
                        }
                        await folded(tails.reduce(0) { $0 + $1.events.count }, tails.count)
                        tails.removeAll(keepingCapacity: true)
                    }
                    guard !pending.isEmpty else { return }
                    try await rows.copy(pending, on: writer)
                    await folded(unreported, pending.count)
                    pending.removeAll(keepingCapacity: true)
                    unreported = 0
                }

                for try await entry in try await log.foldLogByAccount(accounts: range, after: compacted, on: reader) {
                    if let horizon = compacted[entry.accountId] {
                        if entry.accountId != tail?.account {
                            finishTail()
                            try finishAccount()
                            if pending.count + tails.count >= accountsPerWrite { try await flush() }
                            tail = (entry.accountId, horizon, [])
                        }
                        tail?.events.append(entry.event)
                        continue
                    }
                    finishTail()
                    if entry.accountId != current?.account {
                        try finishAccount()
                        if pending.count + tails.count >= accountsPerWrite { try await flush() }
                        current = (entry.accountId, AccountBatchFold(before: AccountFoldRows()))
                    }
                    current?.fold.apply(entry.event)
                    unreported += 1
                }
                finishTail()
                try finishAccount()
                try await flush()
            }
        }
    }

    /// Folds the account's events after its rebuilt version, up to the head read in `lag`, into
    /// the rebuild tables, in the caller's transaction on `connection`, `catchUpBatch` events at
    /// a time; tells `folded` how many after each step. Returns the version the rebuilt rows include then.
    @discardableResult
    private func catchUp(_ lag: RebuildLag, on connection: PostgresConnection, folded: (Int) async -> Void) async throws -> Int64 {
        var rebuilt = lag.rebuiltVersion
        while rebuilt < lag.version {
            let upper = min(lag.version, rebuilt + catchUpBatch)
            let entries = try await log.readFoldLog(ofAccount: lag.accountId, versions: (rebuilt + 1)...upper, on: connection)
            // Fewer than asked: the account was erased meanwhile, and its rows go at the end.
            guard !entries.isEmpty else { return rebuilt }
            try await rows.fold(account: lag.accountId, batch: AccountBatch(events: entries.map(\.event), foldedVersion: rebuilt), on: connection)
            rebuilt = upper
            await folded(entries.count)
        }
        return rebuilt
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

    /// Makes the rebuilt projections the live ones and starts a new epoch: every device's next
    /// pull answers with its whole view. Every account's folded version becomes the version its
    /// rebuilt rows include (its head), so accounts behind and parked ones are current afterwards.
    ///
    /// Account by account, as `verify` goes, in `partitions` ranges side by side: each account in
    /// a short transaction of its own that locks its head row (`FOR NO KEY UPDATE`: its pushes and its
    /// maintenance fold wait for that one account, its pulls do not), catches its rebuilt rows up
    /// to the head and swaps them in (`ProjectionStore.swapRebuiltRows`). No statement locks a
    /// table, and the other accounts' pushes go on (on Citus each statement runs on the account's
    /// shard). Accounts made meanwhile are swapped in a next round (`catchUpRounds` of them at
    /// most: an account made after the last is folded live from its first event, as the rebuild
    /// would); an account erased before its swap is skipped, and the rows the rebuild wrote of
    /// accounts erased meanwhile are dropped at the end. Then the projection's epoch goes up.
    ///
    /// Each swap counts itself on the head (`account_heads.promotions`, migration 0024), which
    /// is part of the head's mark (`AccountHead.mark`) and of the account's epoch:
    /// - A push's optimistic write (`AppendFoldedStatement`; on Citus its router statements)
    ///   checks the mark its read returned, in the `UPDATE` of the head. A push that read before
    ///   the swap and writes after it finds another mark and writes nothing (then reads the
    ///   swapped rows). On one PostgreSQL its one statement takes its snapshot before it waits for
    ///   the head the swap holds; its fold arms' `DELETE`s, which see that snapshot, run only when
    ///   that `UPDATE` moved the head, and PostgreSQL checks the `UPDATE`'s condition again on
    ///   the row as the swap left it: the write over rows the snapshot does not show is refused.
    ///   (An account-by-account swap that left the head as it was lost removals: a donation group
    ///   a deletion had removed came back.) The locking way takes the head's lock first and reads
    ///   its rows in later statements, each on a snapshot taken after the lock.
    /// - A pull's cursor carries the projection's epoch plus the account's promotions
    ///   (`ProjectionStore.pull`): a cursor of the rows from before the account's swap resets,
    ///   whether the promotion has reached the other accounts or not. The epoch raised at the end
    ///   resets the cursors given between an account's swap and the end once more.
    ///
    /// `promoted` is told how many accounts were swapped so far, after each.
    public func promote(promoted: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let counter = PromotedCount()
        var done = Set<UUID>()
        for _ in 0...catchUpRounds {
            let accounts = try await store.accountsWithHeads().filter { !done.contains($0) }
            guard !accounts.isEmpty else { break }
            let ranges = max(1, min(partitions, accounts.count))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for range in 0..<ranges {
                    let share = stride(from: range, to: accounts.count, by: ranges).map { accounts[$0] }
                    group.addTask {
                        for account in share {
                            try await promote(account)
                            await promoted(await counter.add())
                        }
                    }
                }
                try await group.waitForAll()
            }
            done.formUnion(accounts)
        }
        try await client.withConnection { try await store.dropErasedAccounts(on: $0) }
        try await store.raiseEpoch()
        logger.info("the rebuilt projections are live now")
    }

    /// One account's swap, in a transaction of its own that holds its head row: its rebuilt rows
    /// caught up to the head, then put in place of its live ones. Nothing when it has no head any
    /// more (erased).
    private func promote(_ account: UUID) async throws {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                guard let (lag, _, _) = try await store.lockHeadForRebuild(account, on: connection) else { return }
                let rebuilt = try await catchUp(lag, on: connection) { _ in }
                try await store.swapRebuiltRows(of: account, rebuiltVersion: rebuilt, on: connection)
            }
        }
    }
}

/// How many accounts a promotion swapped so far.
private actor PromotedCount {
    private var count = 0
    func add() -> Int {
        count += 1
        return count
    }
}
