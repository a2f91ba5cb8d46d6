import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// Where the live and the rebuilt projections stand, read in one snapshot on `connection`.
    public func checkpoints(on connection: PostgresConnection) async throws -> (live: LogCheckpoint, rebuilt: LogCheckpoint) {
        let live = try await ProjectionRowStore(tables: .live, logger: logger).checkpoint(on: connection).log
        let rebuilt = try await ProjectionRowStore(tables: .rebuild, logger: logger).checkpoint(on: connection).log
        return (live, rebuilt)
    }

    /// The rows where live and rebuilt projections disagree, read on `connection` in one snapshot
    /// with both at one checkpoint. Rows are compared on `(account_id, key, view)` for items
    /// present in the view only: versions and tombstones depend on where batches happened to
    /// begin and end (a shortcut donated and deleted within one batch leaves no row at all), so
    /// they differ between two correct runs. Accounts are compared on their greatest hlc, devices
    /// on the apps they reported (not on how many times that set changed between batches); the
    /// fold's rows (donation groups, deletion marks) on every column.
    public func differences(limit: Int, on connection: PostgresConnection) async throws -> [ProjectionDifference] {
        // Each comparison reads (account, key, live, rebuilt), the sides as text, NULL where absent.
        let comparisons: [(ProjectionDifference.Kind, PostgresQuery)] = [
            (.account, """
                SELECT coalesce(l.account_id, r.account_id), '',
                       CASE WHEN l.account_id IS NULL THEN NULL ELSE concat('hlc ', l.max_hlc_wall, '.', l.max_hlc_counter) END,
                       CASE WHEN r.account_id IS NULL THEN NULL ELSE concat('hlc ', r.max_hlc_wall, '.', r.max_hlc_counter) END
                FROM projection_accounts l FULL JOIN rebuild.projection_accounts r ON l.account_id = r.account_id
                WHERE l.account_id IS NULL OR r.account_id IS NULL
                   OR (l.max_hlc_wall, l.max_hlc_counter) IS DISTINCT FROM (r.max_hlc_wall, r.max_hlc_counter)
                ORDER BY 1 LIMIT \(limit)
                """),
            (.device, """
                SELECT coalesce(l.account_id, r.account_id), coalesce(l.device_id, r.device_id)::text,
                       l.installed::text, r.installed::text
                FROM projection_devices l FULL JOIN rebuild.projection_devices r
                  ON l.account_id = r.account_id AND l.device_id = r.device_id
                WHERE l.installed IS DISTINCT FROM r.installed
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.shortcut, """
                SELECT coalesce(l.account_id, r.account_id),
                       coalesce(l.bundle_id, r.bundle_id) || '/' || coalesce(l.identifier, r.identifier), l.view::text, r.view::text
                FROM (SELECT * FROM projection_shortcuts WHERE view IS NOT NULL) l
                FULL JOIN (SELECT * FROM rebuild.projection_shortcuts WHERE view IS NOT NULL) r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.identifier = r.identifier
                WHERE l.view IS DISTINCT FROM r.view
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.voiceShortcut, """
                SELECT coalesce(l.account_id, r.account_id),
                       coalesce(l.voice_shortcut_id, r.voice_shortcut_id)::text, l.view::text, r.view::text
                FROM (SELECT * FROM projection_voice_shortcuts WHERE view IS NOT NULL) l
                FULL JOIN (SELECT * FROM rebuild.projection_voice_shortcuts WHERE view IS NOT NULL) r
                  ON l.account_id = r.account_id AND l.voice_shortcut_id = r.voice_shortcut_id
                WHERE l.view IS DISTINCT FROM r.view
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.donationGroup, """
                SELECT coalesce(l.account_id, r.account_id),
                       concat_ws('/', coalesce(l.bundle_id, r.bundle_id), coalesce(l.identifier, r.identifier), coalesce(l.group_id, r.group_id)),
                       CASE WHEN l.account_id IS NOT NULL THEN concat('donations ', l.donations, ' latest ', l.latest_position, ' ', encode(l.latest_key, 'hex'), ' covered below ', encode(l.covered_below, 'hex')) END,
                       CASE WHEN r.account_id IS NOT NULL THEN concat('donations ', r.donations, ' latest ', r.latest_position, ' ', encode(r.latest_key, 'hex'), ' covered below ', encode(r.covered_below, 'hex')) END
                FROM projection_donation_groups l FULL JOIN rebuild.projection_donation_groups r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.identifier = r.identifier AND l.group_id = r.group_id
                WHERE (l.donations, l.latest_key, l.latest_position, l.covered_below) IS DISTINCT FROM (r.donations, r.latest_key, r.latest_position, r.covered_below)
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.deletionMark, """
                SELECT coalesce(l.account_id, r.account_id),
                       concat_ws(' ', coalesce(l.bundle_id, r.bundle_id), coalesce(l.scope, r.scope), coalesce(l.value, r.value)),
                       encode(l.key, 'hex'), encode(r.key, 'hex')
                FROM projection_deletion_marks l FULL JOIN rebuild.projection_deletion_marks r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.scope = r.scope AND l.value = r.value
                WHERE l.key IS DISTINCT FROM r.key
                ORDER BY 1, 2 LIMIT \(limit)
                """),
        ]
        var differences: [ProjectionDifference] = []
        for (kind, query) in comparisons {
            let rows = try await connection.guardedQuery(query, logger: logger)
            for try await (account, key, live, rebuilt) in rows.decode((UUID, String, String?, String?).self) {
                differences.append(ProjectionDifference(kind: kind, accountId: account, key: key, live: live, rebuilt: rebuilt))
            }
        }
        return differences
    }

    /// Replaces the live projections with the rebuilt ones and starts a new epoch (every device's
    /// next pull answers with its whole view), in the caller's transaction on `connection`,
    /// which must hold the live checkpoint and have brought the rebuild to it.
    public func copyRebuildToLive(on connection: PostgresConnection) async throws {
        for table in ProjectionTables.names {
            try await connection.guardedQuery("DELETE FROM \(unescaped: table)", logger: logger)
            try await connection.guardedQuery("INSERT INTO \(unescaped: table) SELECT * FROM rebuild.\(unescaped: table)", logger: logger)
        }
        try await connection.guardedQuery(
            "UPDATE projection_checkpoint SET epoch = epoch + 1, updated_at = now() WHERE name = 'live'", logger: logger)
    }
}
