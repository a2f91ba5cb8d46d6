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
    @discardableResult
    public func fold(_ entries: [FoldLogEntry], from: LogCheckpoint, on connection: PostgresConnection, notify: Bool) async throws -> [ProjectionNotification] {
        guard let last = entries.last else { return [] }
        return try await connection.inTransaction(logger: logger) { connection in
            let current = try await rows.checkpoint(on: connection, forUpdate: true)
            guard current.log == from else {
                throw ProjectionError.checkpointMoved(expected: from, found: current.log)
            }
            var byAccount: [UUID: [FoldEvent]] = [:]
            for entry in entries { byAccount[entry.accountId, default: []].append(entry.event) }
            let needs = byAccount.mapValues { FoldNeeds(events: $0) }
            let stored = try await rows.read(needs, on: connection)

            var folds: [UUID: AccountBatchFold] = [:]
            var recounts: [(account: UUID, recount: AccountBatchFold.Recount)] = []
            for (account, events) in byAccount {
                var fold = AccountBatchFold(before: stored[account] ?? AccountFoldRows(),
                                            normalizedPhrases: needs[account]?.normalizedPhrases ?? [:])
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
            try await rows.advanceCheckpoint(to: last.checkpoint, on: connection)
            let notifications = results.filter(\.value.notify).map {
                ProjectionNotification(accountId: $0.key, version: $0.value.version, position: $0.value.lastPosition)
            }.sorted { $0.position < $1.position }
            if notify { try await rows.notify(notifications, on: connection) }
            return notifications
        }
    }
}
