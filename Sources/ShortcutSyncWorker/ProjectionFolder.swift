import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore

/// Folds batches of the log into one set of projection tables, one transaction per batch.
///
/// The live worker and a rebuild's catch-up run exactly this code, so a rebuild proves the live fold.
public struct ProjectionFolder: Sendable {
    public let rows: ProjectionRowStore
    public let logger: Logger

    public init(tables: ProjectionTables, logger: Logger) {
        rows = ProjectionRowStore(tables: tables, logger: logger)
        self.logger = logger
    }

    /// Folds `entries` (consecutive in log order, right after `from`) in one transaction on
    /// `connection`: reads the rows the batch touches, folds each account's events with the
    /// domain's `AccountBatchFold`, asks the log what late deletions cover, writes back what
    /// changed and moves the checkpoint — only if it still is at `from`, else it throws
    /// `ProjectionError.checkpointMoved` and writes nothing. With `notify`, it `pg_notify`s one
    /// `ProjectionNotification` per account whose view or devices' apps changed, and returns them.
    ///
    /// Events of parked accounts, and of accounts erased since the batch was read, are skipped. With `isolating` (the batch failed before), each
    /// account is folded on its own, behind a savepoint: an account that fails is parked and the
    /// others go on (DESIGN §6: one account's data never stops the others).
    @discardableResult
    public func fold(
        _ entries: [FoldLogEntry], from: LogCheckpoint, on connection: PostgresConnection, notify: Bool, isolating: Bool = false
    ) async throws -> [ProjectionNotification] {
        guard let last = entries.last else { return [] }
        return try await connection.inTransaction(logger: logger) { connection in
            let current = try await rows.checkpoint(on: connection, forUpdate: true)
            guard current.log == from else {
                throw ProjectionError.checkpointMoved(expected: from, found: current.log)
            }
            var byAccount: [UUID: [FoldEvent]] = [:]
            for entry in entries {
                byAccount[entry.accountId, default: []].append(entry.event)
            }
            for account in try await rows.skippedAccounts(among: byAccount.keys, on: connection) {
                byAccount[account] = nil
            }

            var results: [UUID: AccountBatchResult] = [:]
            if isolating {
                for (account, events) in byAccount.sorted(by: { $0.value[0].position < $1.value[0].position }) {
                    let folded = try await connection.inSavepoint("account_fold", logger: logger) { connection in
                        try await foldAccounts([account: events], from: from, on: connection)
                    } recover: { error in
                        let position = events[0].position
                        try await rows.park(account, position: position, error: String(describing: error), on: connection)
                        logger.log(level: .error, "an account's events could not be folded: it is parked, the others go on", error: error, metadata: [
                            "account": "\(account)", "first_position": "\(position)",
                        ])
                        return [:]
                    }
                    results.merge(folded) { $1 }
                }
            } else {
                results = try await foldAccounts(byAccount, from: from, on: connection)
            }

            try await rows.advanceCheckpoint(to: last.checkpoint, on: connection)
            let notifications = results.filter(\.value.notify).map {
                ProjectionNotification(accountId: $0.key, version: $0.value.version, position: $0.value.lastPosition)
            }.sorted { $0.position < $1.position }
            if notify { try await rows.notify(notifications, on: connection) }
            return notifications
        }
    }

    /// Reads, folds and writes the accounts' events of one batch, in the caller's transaction.
    private func foldAccounts(_ byAccount: [UUID: [FoldEvent]], from: LogCheckpoint, on connection: PostgresConnection) async throws -> [UUID: AccountBatchResult] {
        let needs = byAccount.mapValues { FoldNeeds(events: $0) }
        let stored = try await rows.read(needs, on: connection)
        var folds: [UUID: AccountBatchFold] = [:]
        var recounts: [(account: UUID, recount: AccountBatchFold.Recount)] = []
        for (account, events) in byAccount {
            var fold = AccountBatchFold(before: stored[account] ?? AccountFoldRows(), normalizedPhrases: needs[account]?.normalizedPhrases ?? [:])
            for event in events { fold.apply(event) }
            recounts += fold.recounts.map { (account, $0) }
            folds[account] = fold
        }
        let covered = try await rows.countCovered(recounts, foldedThrough: from, on: connection)
        var results: [UUID: AccountBatchResult] = [:]
        for (account, fold) in folds {
            results[account] = try fold.finish(covered: covered[account] ?? [:])
        }
        try await rows.write(results, on: connection)
        return results
    }

    /// Folds a parked account again from its whole log, up to the live checkpoint, in one
    /// transaction that holds the checkpoint: its rows are written anew, its devices' cursors
    /// reset, and it is unparked. Throws (and leaves it parked) if it still cannot be folded.
    public func unpark(_ account: UUID, log: PostgresEventStore, on connection: PostgresConnection) async throws -> ProjectionNotification {
        try await connection.inTransaction(logger: logger) { connection in
            let checkpoint = try await rows.checkpoint(on: connection, forUpdate: true)
            let entries = try await log.readFoldLog(ofAccount: account, through: checkpoint.log, on: connection)
            var before = AccountFoldRows()
            before.version = try await rows.clearAccount(account, on: connection)
            var fold = AccountBatchFold(before: before)
            for entry in entries { fold.apply(entry.event) }
            var result = try fold.finish()
            result.version = before.version + 1
            try await rows.write([account: result], on: connection)
            try await rows.resetCursors(of: account, before: result.version, on: connection)
            let notification = ProjectionNotification(accountId: account, version: result.version, position: result.lastPosition)
            try await rows.notify([notification], on: connection)
            return notification
        }
    }
}
