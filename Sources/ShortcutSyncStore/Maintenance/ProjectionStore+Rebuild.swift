import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// How many events the log holds now: a rebuild's total.
    public func eventCount() async throws -> Int {
        // Cross-account: a rebuild's total, counted once at its start.
        Int(try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int64.self).collectAll().first ?? 0)
    }

    /// The accounts whose head is past the version their rebuilt rows include (0 when the rebuild
    /// tables hold none of their rows), read on `connection`: what a rebuild's catch-up folds.
    public func rebuildLag(on connection: PostgresConnection) async throws -> [RebuildLag] {
        // Cross-account: a rebuild's catch-up compares every head with its rebuilt version.
        let rows = try await connection.guardedQuery("""
            SELECT h.account_id, h.version, coalesce(r.version, 0)
            FROM account_heads h LEFT JOIN rebuild.projection_accounts r ON r.account_id = h.account_id
            WHERE h.version > coalesce(r.version, 0)
            ORDER BY h.account_id
            """, logger: logger)
        return try await rows.decode((UUID, Int64, Int64).self).collectAll().map {
            RebuildLag(accountId: $0.0, version: $0.1, rebuiltVersion: $0.2)
        }
    }

    /// Copies every compacted account's snapshot (its rows at its horizon) into the emptied rebuild
    /// tables, where its rebuild starts; returns those accounts with their horizon versions (the
    /// version of the snapshot's rows): the account-by-account pass folds only their events after it.
    public func seedRebuildFromSnapshots() async throws -> [UUID: Int64] {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                for table in ProjectionTables.names {
                    // Cross-account: a rebuild starts every compacted account from its snapshot.
                    try await connection.guardedQuery("INSERT INTO rebuild.\(unescaped: table) SELECT * FROM snapshot.\(unescaped: table)",
                                                      logger: logger)
                }
                // Cross-account: the compacted accounts, once at a rebuild's start.
                let rows = try await connection.guardedQuery("SELECT account_id, version FROM snapshot.projection_accounts", logger: logger)
                var horizons: [UUID: Int64] = [:]
                for try await (account, version) in rows.decode((UUID, Int64).self) { horizons[account] = version }
                return horizons
            }
        }
    }

    /// Removes from the rebuild tables the rows of accounts erased since the rebuild read them
    /// (they have no head any more), on `connection`.
    public func dropErasedAccounts(on connection: PostgresConnection) async throws {
        for table in ProjectionTables.names {
            // Cross-account: the rebuilt rows of every account without a head.
            try await connection.guardedQuery("""
                DELETE FROM rebuild.\(unescaped: table) r
                WHERE NOT EXISTS (SELECT 1 FROM account_heads h WHERE h.account_id = r.account_id)
                """, logger: logger)
        }
    }

    /// The account's rows where live and rebuilt projections disagree, read on `connection`, whose
    /// transaction holds the account's head with both sides at it (`verify`: an account whose live
    /// rows are behind its head, after an import or parked, is not compared). Rows are compared on `(account_id, key, view)` for items
    /// present in the view only: versions and tombstones depend on where batches happened to
    /// begin and end (a shortcut donated and deleted within one batch leaves no row at all), so
    /// they differ between two correct runs. Accounts are compared on their greatest hlc, learning rules and shortcut count, devices
    /// on the apps they reported (not on how many times that set changed between batches); the
    /// fold's rows (donation groups, deletion marks) on every column. `tables`: the rebuilt rows,
    /// or (a compaction's check) the snapshot with the events after its horizon folded in.
    public func differences(account: UUID, limit: Int, against tables: ProjectionTables = .rebuild,
                            on connection: PostgresConnection) async throws -> [ProjectionDifference] {
        // Each comparison reads (account, key, live, rebuilt), the sides as text, NULL where absent;
        // each side is the account's rows only (one shard on Citus).
        let comparisons: [(ProjectionDifference.Kind, PostgresQuery)] = [
            (.account, """
                SELECT coalesce(l.account_id, r.account_id), '',
                       CASE WHEN l.account_id IS NULL THEN NULL
                            ELSE concat('hlc ', l.max_hlc_wall, '.', l.max_hlc_counter, ' learning ', encode(l.learning, 'hex'),
                                        ' shortcuts ', l.shortcut_count) END,
                       CASE WHEN r.account_id IS NULL THEN NULL
                            ELSE concat('hlc ', r.max_hlc_wall, '.', r.max_hlc_counter, ' learning ', encode(r.learning, 'hex'),
                                        ' shortcuts ', r.shortcut_count) END
                FROM (SELECT * FROM projection_accounts WHERE account_id = \(account)) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_accounts WHERE account_id = \(account)) r ON l.account_id = r.account_id
                WHERE (l.account_id IS NULL OR r.account_id IS NULL
                   OR (l.max_hlc_wall, l.max_hlc_counter, l.learning, l.shortcut_count)
                      IS DISTINCT FROM (r.max_hlc_wall, r.max_hlc_counter, r.learning, r.shortcut_count))
                ORDER BY 1 LIMIT \(limit)
                """),
            (.device, """
                SELECT coalesce(l.account_id, r.account_id), coalesce(l.device_id, r.device_id)::text,
                       l.installed::text, r.installed::text
                FROM (SELECT * FROM projection_devices WHERE account_id = \(account)) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_devices WHERE account_id = \(account)) r
                  ON l.account_id = r.account_id AND l.device_id = r.device_id
                WHERE (l.installed IS DISTINCT FROM r.installed)
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.shortcut, """
                SELECT coalesce(l.account_id, r.account_id),
                       coalesce(l.bundle_id, r.bundle_id) || '/' || coalesce(l.identifier, r.identifier),
                       CASE WHEN l.account_id IS NOT NULL THEN concat(l.view::text, ' donations ', l.donations, ' latest ', encode(l.latest_key, 'hex'), ' habits ', md5(l.habits)) END,
                       CASE WHEN r.account_id IS NOT NULL THEN concat(r.view::text, ' donations ', r.donations, ' latest ', encode(r.latest_key, 'hex'), ' habits ', md5(r.habits)) END
                FROM (SELECT * FROM projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL) r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.identifier = r.identifier
                WHERE ((l.view, l.donations, l.latest_key, l.habits) IS DISTINCT FROM (r.view, r.donations, r.latest_key, r.habits))
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.voiceShortcut, """
                SELECT coalesce(l.account_id, r.account_id),
                       coalesce(l.voice_shortcut_id, r.voice_shortcut_id)::text, l.view::text, r.view::text
                FROM (SELECT * FROM projection_voice_shortcuts WHERE account_id = \(account) AND view IS NOT NULL) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_voice_shortcuts WHERE account_id = \(account) AND view IS NOT NULL) r
                  ON l.account_id = r.account_id AND l.voice_shortcut_id = r.voice_shortcut_id
                WHERE (l.view IS DISTINCT FROM r.view)
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.donationGroup, """
                SELECT coalesce(l.account_id, r.account_id),
                       concat_ws('/', coalesce(l.bundle_id, r.bundle_id), coalesce(l.identifier, r.identifier), coalesce(l.group_id, r.group_id)),
                       CASE WHEN l.account_id IS NOT NULL THEN concat('donations ', l.donations, ' latest ', l.latest_version, ' ', encode(l.latest_key, 'hex'), ' covered below ', encode(l.covered_below, 'hex'), ' habits ', md5(l.habits)) END,
                       CASE WHEN r.account_id IS NOT NULL THEN concat('donations ', r.donations, ' latest ', r.latest_version, ' ', encode(r.latest_key, 'hex'), ' covered below ', encode(r.covered_below, 'hex'), ' habits ', md5(r.habits)) END
                FROM (SELECT * FROM projection_donation_groups WHERE account_id = \(account)) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_donation_groups WHERE account_id = \(account)) r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.identifier = r.identifier AND l.group_id = r.group_id
                WHERE ((l.donations, l.latest_key, l.latest_version, l.covered_below, l.habits) IS DISTINCT FROM (r.donations, r.latest_key, r.latest_version, r.covered_below, r.habits))
                ORDER BY 1, 2 LIMIT \(limit)
                """),
            (.deletionMark, """
                SELECT coalesce(l.account_id, r.account_id),
                       concat_ws(' ', coalesce(l.bundle_id, r.bundle_id), coalesce(l.scope, r.scope), coalesce(l.value, r.value)),
                       encode(l.key, 'hex'), encode(r.key, 'hex')
                FROM (SELECT * FROM projection_deletion_marks WHERE account_id = \(account)) l
                FULL JOIN (SELECT * FROM \(unescaped: tables.prefix)projection_deletion_marks WHERE account_id = \(account)) r
                  ON l.account_id = r.account_id AND l.bundle_id = r.bundle_id AND l.scope = r.scope AND l.value = r.value
                WHERE (l.key IS DISTINCT FROM r.key)
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

    /// The accounts with a head, in their order: those a verification goes through one by one.
    public func accountsWithHeads() async throws -> [UUID] {
        // Cross-account: a verification's list of every account, read once, without a lock.
        try await client.query("SELECT account_id FROM account_heads ORDER BY account_id", logger: logger).decode(UUID.self).collectAll()
    }

    /// Locks the account's head in the caller's transaction (its pushes and its maintenance fold
    /// wait), and reads how far its rebuilt rows are and how far its live ones, and whether a
    /// migration asked for its refold; nil when it has no head any more (erased). An account
    /// compacted since the rebuild read it (its live horizon is not the one its rebuilt rows stand
    /// on) has its rebuilt rows started again from its snapshot first (`reseedRebuild`).
    public func lockHeadForRebuild(_ account: UUID, on connection: PostgresConnection) async throws
        -> (lag: RebuildLag, foldedVersion: Int64, refoldPending: Bool)? {
        let rows = try await connection.guardedQuery("""
            SELECT h.version, h.folded_version,
                   coalesce((SELECT r.version FROM rebuild.projection_accounts r WHERE r.account_id = \(account)), 0),
                   h.refold_pending,
                   (SELECT p.horizon FROM projection_accounts p WHERE p.account_id = \(account))
                   IS DISTINCT FROM (SELECT r.horizon FROM rebuild.projection_accounts r WHERE r.account_id = \(account))
            FROM account_heads h WHERE h.account_id = \(account)
            FOR NO KEY UPDATE OF h
            """, logger: logger)
        guard let (version, folded, rebuilt, refoldPending, compactedSince) = try await rows.decode((Int64, Int64, Int64, Bool, Bool).self)
            .collectAll().first else {
            return nil
        }
        let from = compactedSince ? try await reseedRebuild(account, on: connection) : rebuilt
        return (RebuildLag(accountId: account, version: version, rebuiltVersion: from), folded, refoldPending)
    }

    /// Starts the account's rebuilt rows again from its snapshot, in the caller's transaction,
    /// which holds its head (no compaction comes between): the account was compacted since the
    /// rebuild read it, so the events between the two horizons may be gone from the log, and a
    /// catch-up would fold the rows on without them. Returns the version they include then.
    func reseedRebuild(_ account: UUID, on connection: PostgresConnection) async throws -> Int64 {
        for table in ProjectionTables.names {
            try await connection.guardedQuery("DELETE FROM rebuild.\(unescaped: table) WHERE account_id = \(account)", logger: logger)
            try await connection.guardedQuery(
                "INSERT INTO rebuild.\(unescaped: table) SELECT * FROM snapshot.\(unescaped: table) WHERE account_id = \(account)", logger: logger)
        }
        let seeded = try await connection.guardedQuery(
            "SELECT version FROM rebuild.projection_accounts WHERE account_id = \(account)", logger: logger).decode(Int64.self).collectAll().first
        logger.info("the account was compacted while the rebuild ran: its rebuilt rows start again from its snapshot",
                    metadata: ["account": "\(account)", "version": "\(seeded ?? 0)"])
        return seeded ?? 0
    }

    /// Replaces the account's live rows with its rebuilt ones, in the caller's transaction on
    /// `connection`, which holds the account's head row (`lockHeadForRebuild`) and has brought its
    /// rebuilt rows to `rebuiltVersion`, its head: the account's folded version becomes
    /// `rebuiltVersion`, a refold a migration asked for is done, a parked account is parked no
    /// more, and its promotions go up by one (migration 0024). That count changes the head's mark
    /// (`AccountHead.mark`), so that no push writes a fold of the rows from before the swap, and
    /// the account's epoch (`pull`), so that every cursor of those rows gets the whole view. Every
    /// statement names the account (one shard on Citus); the other accounts' pushes go on.
    public func swapRebuiltRows(of account: UUID, rebuiltVersion: Int64, on connection: PostgresConnection) async throws {
        for table in ProjectionTables.names {
            try await connection.guardedQuery("DELETE FROM \(unescaped: table) WHERE account_id = \(account)", logger: logger)
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: table) SELECT * FROM rebuild.\(unescaped: table) WHERE account_id = \(account)
                """, logger: logger)
        }
        try await connection.guardedQuery("""
            UPDATE account_heads SET folded_version = \(rebuiltVersion), refold_pending = false, promotions = promotions + 1
            WHERE account_id = \(account)
            """, logger: logger)
        try await connection.guardedQuery("""
            DELETE FROM projection_parked_accounts p USING account_heads h
            WHERE p.account_id = \(account) AND h.account_id = \(account) AND h.folded_version = h.version
            """, logger: logger)
    }

    /// Starts a new epoch of the live projections: every cursor given before it gets the whole
    /// view at its next pull. The end of a rebuild's promotion, after every account's swap (each
    /// of which already reset its own account's cursors, `swapRebuiltRows`).
    public func raiseEpoch() async throws {
        try await client.query("UPDATE projection_checkpoint SET epoch = epoch + 1, updated_at = now() WHERE name = 'live'", logger: logger)
    }

    /// Puts every account behind its head with nothing folded, as an import of a whole log would
    /// leave them (the live projections emptied): for benchmarks of the maintenance fold, on their
    /// own scratch database. Never on a service's database: every view is gone until refolded.
    public func forgetEveryFold() async throws {
        try await ProjectionRowStore(tables: .live, logger: logger).reset(client)
        // Cross-account: a benchmark's setup.
        try await client.query("UPDATE account_heads SET folded_version = 0", logger: logger)
    }
}
