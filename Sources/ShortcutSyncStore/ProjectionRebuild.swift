import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How far a rebuild has come, handed to its progress callback after every page.
public struct RebuildProgress: Sendable, Hashable {
    /// Events replayed so far by this call.
    public var processed: Int
    public var checkpoint: LogCheckpoint
    /// The log's greatest position when the page was read.
    public var headPosition: Int64
}

/// One row on which the rebuilt projections and the live ones disagree.
public struct ProjectionDifference: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case account, device, shortcut, voiceShortcut
    }

    public var kind: Kind
    public var accountId: UUID
    /// `bundleId/identifier` for shortcuts, the id for voice shortcuts and devices, "" for accounts.
    public var key: String
    /// The row's content on each side (JSON for views), nil where that side has no such row.
    public var live: String?
    public var rebuilt: String?

    public var description: String {
        "\(kind.rawValue) \(accountId.uuidString.lowercased()) \(key): live \(live ?? "absent"), rebuilt \(rebuilt ?? "absent")"
    }
}

/// The outcome of `verify`: both sides at `checkpoint`, and where they differ.
public struct ProjectionVerification: Sendable, Hashable {
    public var checkpoint: LogCheckpoint
    public var differences: [ProjectionDifference]
    public var isConsistent: Bool { differences.isEmpty }
}

extension ProjectionStore {
    /// Replays the whole log from the start into the `rebuild` tables, with the fold the live
    /// worker uses, page by page (memory stays flat in the log's length), while the live
    /// projections keep being served and updated. Returns where the replay stopped: the log's
    /// committed end when it started reading its last page.
    @discardableResult
    public func rebuild(
        pageSize: Int = 1000,
        progress: @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> LogCheckpoint {
        try await client.query("""
            TRUNCATE rebuild.projection_accounts, rebuild.projection_devices, rebuild.projection_shortcuts, rebuild.projection_voice_shortcuts
            """, logger: logger)
        try await client.query("""
            UPDATE rebuild.projection_checkpoint SET tx_id = '0', position = 0, updated_at = now() WHERE name = 'live'
            """, logger: logger)
        return try await continueRebuild(pageSize: pageSize, progress: progress)
    }

    /// Goes on replaying into the `rebuild` tables from where they stand, up to `limit` if given
    /// (never past it), else to the log's committed end.
    @discardableResult
    public func continueRebuild(
        through limit: LogCheckpoint? = nil,
        pageSize: Int = 1000,
        progress: @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> LogCheckpoint {
        let folder = ProjectionFolder(tables: .rebuild, logger: logger)
        let log = PostgresEventStore(client: client, logger: logger)
        return try await client.withConnection { connection in
            var checkpoint = try await folder.checkpoint(on: connection).log
            var processed = 0
            while limit.map({ checkpoint < $0 }) ?? true {
                var page = try await log.readLog(after: checkpoint, limit: pageSize)
                if let limit { page.removeAll { $0.checkpoint > limit } }
                guard let last = page.last else { break }
                _ = try await folder.apply(page, from: checkpoint, on: connection, notify: false)
                checkpoint = last.checkpoint
                processed += page.count
                await progress(RebuildProgress(processed: processed, checkpoint: checkpoint, headPosition: try await headPosition()))
            }
            return checkpoint
        }
    }

    /// Rebuilds from the log and compares the result with the live projections at one checkpoint.
    ///
    /// The live side moves while this runs, so the rebuild is brought to exactly the live
    /// checkpoint (or waits, up to `timeout`, for the worker to reach the rebuild's) and both are
    /// read in one snapshot. Rows are compared on `(account_id, key, view)` for items present in
    /// the view only: versions and tombstones depend on where batches happened to begin and end
    /// (a shortcut donated and deleted within one batch leaves no row at all), so they differ
    /// between two correct runs. Accounts are compared on their greatest hlc, devices on the
    /// apps they reported (not on how many times that set changed between batches).
    public func verify(
        pageSize: Int = 1000,
        timeout: Duration = .seconds(30),
        maxDifferences: Int = 100,
        progress: @Sendable (RebuildProgress) async -> Void = { _ in }
    ) async throws -> ProjectionVerification {
        try await rebuild(pageSize: pageSize, progress: progress)
        let deadline = ContinuousClock.now + timeout
        while true {
            let outcome = try await client.withConnection { connection in
                try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection -> VerifyStep in
                    let live = try await ProjectionFolder(tables: .live, logger: logger).checkpoint(on: connection).log
                    let rebuilt = try await ProjectionFolder(tables: .rebuild, logger: logger).checkpoint(on: connection).log
                    if live == rebuilt {
                        let differences = try await self.differences(limit: maxDifferences, on: connection)
                        return .compared(ProjectionVerification(checkpoint: live, differences: differences))
                    }
                    return live < rebuilt ? .liveBehind(live: live, rebuilt: rebuilt) : .rebuildBehind(live: live)
                }
            }
            switch outcome {
            case .compared(let verification):
                return verification
            case .rebuildBehind(let live):
                try await continueRebuild(through: live, pageSize: pageSize, progress: progress)
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

    /// The rows where live and rebuilt projections disagree, read on `connection` (see `verify`).
    func differences(limit: Int, on connection: PostgresConnection) async throws -> [ProjectionDifference] {
        var differences: [ProjectionDifference] = []
        let accounts = try await connection.guardedQuery("""
            SELECT coalesce(l.account_id, r.account_id),
                   CASE WHEN l.account_id IS NULL THEN NULL ELSE concat('hlc ', l.max_hlc_wall, '.', l.max_hlc_counter) END,
                   CASE WHEN r.account_id IS NULL THEN NULL ELSE concat('hlc ', r.max_hlc_wall, '.', r.max_hlc_counter) END
            FROM projection_accounts l FULL JOIN rebuild.projection_accounts r ON l.account_id = r.account_id
            WHERE l.account_id IS NULL OR r.account_id IS NULL
               OR (l.max_hlc_wall, l.max_hlc_counter) IS DISTINCT FROM (r.max_hlc_wall, r.max_hlc_counter)
            ORDER BY 1 LIMIT \(limit)
            """, logger: logger)
        for try await (account, live, rebuilt) in accounts.decode((UUID, String?, String?).self) {
            differences.append(ProjectionDifference(kind: .account, accountId: account, key: "", live: live, rebuilt: rebuilt))
        }
        let devices = try await connection.guardedQuery("""
            SELECT coalesce(l.account_id, r.account_id), coalesce(l.device_id, r.device_id)::text,
                   l.installed::text, r.installed::text
            FROM projection_devices l FULL JOIN rebuild.projection_devices r
              ON l.account_id = r.account_id AND l.device_id = r.device_id
            WHERE l.installed IS DISTINCT FROM r.installed
            ORDER BY 1, 2 LIMIT \(limit)
            """, logger: logger)
        for try await (account, key, live, rebuilt) in devices.decode((UUID, String, String?, String?).self) {
            differences.append(ProjectionDifference(kind: .device, accountId: account, key: key, live: live, rebuilt: rebuilt))
        }
        let shortcuts = try await connection.guardedQuery("""
            SELECT coalesce(l.account_id, r.account_id),
                   coalesce(l.bundle_id, r.bundle_id) || '/' || coalesce(l.identifier, r.identifier), l.view::text, r.view::text
            FROM (SELECT * FROM projection_shortcuts WHERE view IS NOT NULL) l
            FULL JOIN (SELECT * FROM rebuild.projection_shortcuts WHERE view IS NOT NULL) r
              ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.identifier = r.identifier
            WHERE l.view IS DISTINCT FROM r.view
            ORDER BY 1, 2 LIMIT \(limit)
            """, logger: logger)
        for try await (account, key, live, rebuilt) in shortcuts.decode((UUID, String, String?, String?).self) {
            differences.append(ProjectionDifference(kind: .shortcut, accountId: account, key: key, live: live, rebuilt: rebuilt))
        }
        let voices = try await connection.guardedQuery("""
            SELECT coalesce(l.account_id, r.account_id),
                   coalesce(l.voice_shortcut_id, r.voice_shortcut_id)::text, l.view::text, r.view::text
            FROM (SELECT * FROM projection_voice_shortcuts WHERE view IS NOT NULL) l
            FULL JOIN (SELECT * FROM rebuild.projection_voice_shortcuts WHERE view IS NOT NULL) r
              ON l.account_id = r.account_id AND l.voice_shortcut_id = r.voice_shortcut_id
            WHERE l.view IS DISTINCT FROM r.view
            ORDER BY 1, 2 LIMIT \(limit)
            """, logger: logger)
        for try await (account, key, live, rebuilt) in voices.decode((UUID, String, String?, String?).self) {
            differences.append(ProjectionDifference(kind: .voiceShortcut, accountId: account, key: key, live: live, rebuilt: rebuilt))
        }
        return differences
    }

    /// Makes the rebuilt projections the live ones and starts a new epoch: every device's next
    /// pull answers with its whole view.
    ///
    /// One transaction holds the live checkpoint (a running worker waits for it, then goes on
    /// from the same point), brings the rebuild to exactly that checkpoint and copies it over.
    /// When the rebuild has already passed the live side, it waits (up to `timeout`) for the worker.
    public func promoteRebuild(pageSize: Int = 1000, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try await client.withConnection { connection in
                    try await connection.inTransaction(logger: logger) { connection in
                        let live = try await ProjectionFolder(tables: .live, logger: logger).checkpoint(on: connection, forUpdate: true)
                        let rebuilt = try await continueRebuild(through: live.log, pageSize: pageSize)
                        guard rebuilt == live.log else {
                            throw ProjectionError.liveProjectionsBehind(live: live.log, rebuilt: rebuilt)
                        }
                        for table in ["projection_accounts", "projection_devices", "projection_shortcuts", "projection_voice_shortcuts"] {
                            try await connection.guardedQuery("DELETE FROM \(unescaped: table)", logger: logger)
                            try await connection.guardedQuery("INSERT INTO \(unescaped: table) SELECT * FROM rebuild.\(unescaped: table)", logger: logger)
                        }
                        try await connection.guardedQuery(
                            "UPDATE projection_checkpoint SET epoch = epoch + 1, updated_at = now() WHERE name = 'live'", logger: logger)
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
