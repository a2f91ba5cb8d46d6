import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The read of a push of donations alone (`DonationReadStatement`'s rows) on Citus, as one call
/// of a distributed function, `fold_read_donations`, which Citus sends whole to the worker that
/// holds the account's shards (issue 66, item 1): the one statement is a router plan of a CTE
/// and a `UNION ALL` that Citus plans anew at every push (20–68 ms on a loaded worker against
/// 0.11 ms on one PostgreSQL, docs/citus.md), where each of the function's statements is a
/// fast-path router statement of one table, run on the local shard with a cached plan.
///
/// Its parameters: `$1` the account, `$2` and `$3` the donated shortcuts' apps and identifiers,
/// `$4`…`$6` the deletion marks' and forgets' apps, scopes and values (`StoredScopes`), `$7` the
/// pushing device. A fast-path statement has no subquery, so a set of pairs is read as the rows
/// whose first column is among the firsts and whose second is among the seconds: a superset,
/// which `readByDistributedFunction` cuts down to exactly the one statement's rows. One
/// PostgreSQL keeps the one statement (the function exists only on Citus); made, distributed and
/// named by its body as the push's write is (`DistributedFunctions`).
enum FoldReadFunction: DistributedFunction {
    static let base = "fold_read_donations"
    static let name = named()
    static let parameterTypes = ["uuid", "text[]", "text[]", "text[]", "text[]", "text[]", "uuid"]

    static func definition(named name: String) -> PostgresQuery {
        """
        CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name))
        RETURNS TABLE (part int4, s1 text, s2 text, s3 text, s4 text, s5 text, k1 bytea, k2 bytea, n1 int8, n2 int8, n3 int8,
                       u1 uuid, u2 uuid, f1 bool, f2 bool, installed text[], k3 bytea, n4 int4, k4 bytea)
        LANGUAGE plpgsql AS $function$
        #variable_conflict use_column
        DECLARE
          account projection_accounts%ROWTYPE;
          last_seq int8;
        BEGIN
          -- Each statement a fast-path router statement of one table, on the account's local shard
          -- (issue 66): no subquery, no CTE, no join. The parts are those of DonationReadStatement.
          SELECT a.* INTO account FROM projection_accounts a WHERE a.account_id = $1;
          IF FOUND THEN
            RETURN QUERY SELECT 0, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::bytea, NULL::bytea,
                                account.version::int8, account.max_hlc_wall::int8, account.max_hlc_counter::int8,
                                NULL::uuid, NULL::uuid, NULL::bool, NULL::bool, NULL::text[], account.learning,
                                account.shortcut_count::int4, account.horizon;
          END IF;
          RETURN QUERY
            SELECT 1, g.bundle_id, g.identifier, g.group_id, NULL::text, NULL::text, g.latest_key, g.covered_below,
                   g.donations::int8, g.latest_version::int8, NULL::int8, NULL::uuid, NULL::uuid, NULL::bool, NULL::bool,
                   NULL::text[], g.habits, NULL::int4, g.compacted
            FROM projection_donation_groups g WHERE g.account_id = $1 AND g.bundle_id = ANY($2) AND g.identifier = ANY($3);
          RETURN QUERY
            SELECT 2, m.bundle_id, m.scope, m.value, NULL::text, NULL::text, m.key, NULL::bytea, NULL::int8, NULL::int8, NULL::int8,
                   NULL::uuid, NULL::uuid, NULL::bool, NULL::bool, NULL::text[], NULL::bytea, NULL::int4, NULL::bytea
            FROM projection_deletion_marks m
            WHERE m.account_id = $1 AND m.bundle_id = ANY($4) AND m.scope = ANY($5) AND m.value = ANY($6)
                  AND (m.scope <> 'forget' OR coalesce(account.forgets_shortcuts, false));
          RETURN QUERY
            SELECT 3, v.target_bundle_id, v.target_identifier, v.target_title, v.phrase, v.normalized_phrase, v.target_key, v.phrase_key,
                   NULL::int8, NULL::int8, NULL::int8, v.voice_shortcut_id, v.conflicts_with, v.deleted, v.target_available,
                   NULL::text[], NULL::bytea, NULL::int4, NULL::bytea
            FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.target_bundle_id = ANY($2) AND v.target_identifier = ANY($3);
          SELECT e.seq INTO last_seq FROM events e WHERE e.account_id = $1 AND e.device_id = $7 ORDER BY e.seq DESC LIMIT 1;
          RETURN QUERY
            SELECT 5, \(unescaped: AccountHead.markSQL), NULL::text, NULL::text, NULL::text, NULL::text, NULL::bytea, NULL::bytea,
                   h.version::int8, h.folded_version::int8, coalesce(last_seq, 0)::int8, NULL::uuid, NULL::uuid, NULL::bool, NULL::bool,
                   NULL::text[], NULL::bytea, NULL::int4, NULL::bytea
            FROM account_heads h WHERE h.account_id = $1;
        END;
        $function$
        """
    }
}

extension ProjectionRowStore {
    /// `DonationReadStatement`'s rows for `needs` by one call of `fold_read_donations`
    /// (`FoldReadFunction`), on Citus: the function's supersets of pairs cut down to the pairs
    /// asked for, so that the rows are the one statement's.
    func readByDistributedFunction(
        account: UUID, needs: FoldNeeds, device: UUID?, on connection: PostgresConnection
    ) async throws -> (rows: AccountFoldRows, head: AccountHead?) {
        let shortcuts = needs.shortcutColumns, marks = needs.storedMarks
        let rows = try await connection.guardedQuery("""
            SELECT * FROM \(unescaped: FoldReadFunction.name)(\(account), \(shortcuts.bundles), \(shortcuts.identifiers),
                                                              \(marks.bundles), \(marks.scopes), \(marks.values), \(device))
            """, logger: logger)
        var read: [FoldReadRow] = []
        for try await row in rows { read.append(try FoldReadRow(row)) }
        return Self.fold(read.filter { row in
            switch row {
            case .group(let group): needs.shortcuts.contains(group.id.shortcut)
            case .mark(let scope, _): needs.marks.contains(scope)
            case .forgotten(let shortcut, _): needs.forgottenShortcuts.contains(shortcut)
            case .voiceShortcut(let voice):
                voice.target.map { needs.shortcuts.contains(ShortcutID(bundleId: $0.value.bundleId, identifier: $0.value.identifier)) } ?? false
            case .account, .device, .head: true
            }
        })
    }
}
