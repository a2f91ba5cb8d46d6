import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore: MaintenanceQueue {
    /// One account behind, taken with `FOR NO KEY UPDATE SKIP LOCKED` on its head row and folded in that
    /// transaction: a task that dies leaves nothing half done, and its account is taken by another.
    public func foldNextBehind(batchSize: Int, parkedRetry: (first: Duration, longest: Duration)) async throws -> MaintenanceStep {
        precondition(batchSize > 0, "a step folds at least one event")
        let log = PostgresEventStore(client: client, logger: logger)
        return try await client.withConnection { connection in
            var rows = ProjectionRowStore(tables: .live, logger: logger)
            // On Citus the one statements are planned through intermediate results or as router plans: fast-path ones instead.
            rows.distributed = try await writeRoute.form(on: connection, logger: logger) == .distributedFunction
            return try await connection.inTransaction(logger: logger) { connection -> MaintenanceStep in
                guard let account = try await rows.takeAccountBehind(on: connection) else { return .idle }
                // A migration's refold reads the whole log and folds it from nothing; else up to batchSize events.
                let upper = account.refoldPending ? account.version
                    : account.foldedVersion + min(account.version - account.foldedVersion, Int64(batchSize))
                let from = account.refoldPending ? 1 : account.foldedVersion + 1
                let entries = upper < from ? []
                    : try await log.readFoldLog(ofAccount: account.accountId, versions: from...upper, on: connection)
                var failure: (any Error)?
                try await connection.inSavepoint("maintenance_fold", logger: logger) { connection in
                    if account.refoldPending {
                        try await rows.refold(account: account.accountId, events: entries.map(\.event), on: connection)
                    } else {
                        _ = try await rows.fold(account: account.accountId, batch: AccountBatch(events: entries.map(\.event), foldedVersion: account.foldedVersion),
                                                on: connection)
                    }
                } recover: { error in
                    guard !DatabaseAvailability.isUnavailable(error), !(error is CancellationError) else { throw error }
                    failure = error
                }
                if let failure {
                    try await rows.park(account.accountId, version: account.foldedVersion + 1, error: String(describing: failure),
                                        retry: parkedRetry, on: connection)
                    return .parked(account: account.accountId, version: account.foldedVersion + 1, error: failure)
                }
                try await rows.setFolded(account.accountId, version: upper, refolded: account.refoldPending, on: connection)
                try await rows.unpark(account.accountId, on: connection)
                // A refold of an account already current changes no view: its devices are not poked.
                if upper > account.foldedVersion {
                    try await rows.notify(ProjectionNotification(sender: nil, versions: [account.accountId: upper]), on: connection)
                }
                return .folded(account: account.accountId, events: entries.count)
            }
        }
    }

    public func accountsBehind() async throws -> Int64 {
        try await status().accountsBehind
    }
}
