import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// A push's read (`FoldReadStatement`'s rows, and `DonationReadStatement`'s for a push of
/// donations alone) on Citus, as one call of a distributed function, `fold_read`, which Citus
/// sends whole to the worker that holds the account's shards (issue 66, item 1): each statement
/// is a router plan of CTEs, `unnest`s and a `UNION ALL` that Citus plans anew at every push
/// (20–68 ms on a loaded worker against 0.11 ms on one PostgreSQL, docs/citus.md), where each of
/// the function's statements is a fast-path router statement of one table, run on the local
/// shard (planned with its values at each run: `DistributedFunctions.settings`). A kind of row the push does not need (its keys empty) is not read.
///
/// Its parameters are `FoldReadStatement`'s, in its order and from its bindings: `$1` the
/// account; `$2`, `$3` the shortcuts (apps, identifiers); `$4`, `$5` the app groups; `$6` the
/// apps; `$7`…`$9` the deletion marks' and forgets' apps, scopes and values (`StoredScopes`);
/// `$10` the voice shortcuts, `$11` the phrases, `$12` the apps whose voice shortcuts' targets
/// may change; `$13` the devices; `$14` the pushing device. A fast-path statement has no
/// subquery, so a set of pairs is read as the rows whose first column is among the firsts and
/// whose second is among the seconds, and the statement's steps from one kind of row to another
/// (a group to its shortcuts' other groups, a voice shortcut to those sharing its phrase) are
/// statements of their own: a superset, which `readByDistributedFunction` cuts down to exactly
/// the statement's rows. One PostgreSQL keeps the statements (the function exists only on
/// Citus); made, distributed and named by its body as the push's write is
/// (`DistributedFunctions`).
enum FoldReadFunction: DistributedFunction {
    static let base = "fold_read"
    static let name = named()
    static let parameterTypes = ["uuid", "text[]", "text[]", "text[]", "text[]", "text[]", "text[]", "text[]", "text[]",
                                 "uuid[]", "text[]", "text[]", "uuid[]", "uuid"]

    /// The call's parameters, `$1`…`$14` (made once: every push read on Citus sends it).
    static let placeholders = (1...parameterTypes.count).map { "$\($0)" }.joined(separator: ", ")

    /// A group's row (part 1) of `projection_donation_groups g`, as `FoldReadRow` reads it.
    static let groupRow = """
        1, g.bundle_id, g.identifier, g.group_id, NULL::text, NULL::text, g.latest_key, g.covered_below, g.donations::int8,
        g.latest_version::int8, NULL::int8, NULL::uuid, NULL::uuid, NULL::bool, NULL::bool, NULL::text[], g.habits, NULL::int4,
        g.compacted
        """

    /// A voice shortcut's row (part 3) of `projection_voice_shortcuts v`, as `FoldReadRow` reads it.
    static let voiceRow = """
        3, v.target_bundle_id, v.target_identifier, v.target_title, v.phrase, v.normalized_phrase, v.target_key, v.phrase_key,
        NULL::int8, NULL::int8, NULL::int8, v.voice_shortcut_id, v.conflicts_with, v.deleted, v.target_available, NULL::text[],
        NULL::bytea, NULL::int4, NULL::bytea
        """

    static func definition(named name: String) -> PostgresQuery {
        """
        CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name))
        RETURNS TABLE (part int4, s1 text, s2 text, s3 text, s4 text, s5 text, k1 bytea, k2 bytea, n1 int8, n2 int8, n3 int8,
                       u1 uuid, u2 uuid, f1 bool, f2 bool, installed text[], k3 bytea, n4 int4, k4 bytea)
        LANGUAGE plpgsql \(unescaped: DistributedFunctions.settings) AS $function$
        #variable_conflict use_column
        DECLARE
          account projection_accounts%ROWTYPE;
          grouped_bundles text[];
          grouped_identifiers text[];
          linked_phrases text[];
          last_seq int8;
        BEGIN
          -- Each statement a fast-path router statement of one table, on the account's local shard
          -- (issue 66): no subquery, no CTE, no join. The parts are those of FoldReadStatement.
          SELECT a.* INTO account FROM projection_accounts a WHERE a.account_id = $1;
          IF FOUND THEN
            RETURN QUERY SELECT 0, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::bytea, NULL::bytea,
                                account.version::int8, account.max_hlc_wall::int8, account.max_hlc_counter::int8,
                                NULL::uuid, NULL::uuid, NULL::bool, NULL::bool, NULL::text[], account.learning,
                                account.shortcut_count::int4, account.horizon;
          END IF;
          -- The groups: of the shortcuts, of the shortcuts with donations in the app groups, of the apps.
          IF cardinality($4) > 0 THEN
            SELECT array_agg(g.bundle_id), array_agg(g.identifier) INTO grouped_bundles, grouped_identifiers
            FROM projection_donation_groups g WHERE g.account_id = $1 AND g.bundle_id = ANY($4) AND g.group_id = ANY($5);
          END IF;
          IF cardinality($2) > 0 OR cardinality(grouped_bundles) > 0 THEN
            RETURN QUERY
              SELECT \(unescaped: groupRow) FROM projection_donation_groups g
              WHERE g.account_id = $1 AND g.bundle_id = ANY($2 || grouped_bundles) AND g.identifier = ANY($3 || grouped_identifiers);
          END IF;
          IF cardinality($6) > 0 THEN
            RETURN QUERY
              SELECT \(unescaped: groupRow) FROM projection_donation_groups g WHERE g.account_id = $1 AND g.bundle_id = ANY($6);
          END IF;
          IF cardinality($7) > 0 THEN
            RETURN QUERY
              SELECT 2, m.bundle_id, m.scope, m.value, NULL::text, NULL::text, m.key, NULL::bytea, NULL::int8, NULL::int8, NULL::int8,
                     NULL::uuid, NULL::uuid, NULL::bool, NULL::bool, NULL::text[], NULL::bytea, NULL::int4, NULL::bytea
              FROM projection_deletion_marks m
              WHERE m.account_id = $1 AND m.bundle_id = ANY($7) AND m.scope = ANY($8) AND m.value = ANY($9)
                    AND (m.scope <> 'forget' OR coalesce(account.forgets_shortcuts, false));
          END IF;
          -- The voice shortcuts: these, those sharing a phrase (asked, or one of these has now),
          -- those bound to the shortcuts, those bound to a shortcut of the apps.
          IF cardinality($10) > 0 THEN
            SELECT array_agg(w.normalized_phrase) INTO linked_phrases
            FROM projection_voice_shortcuts w
            WHERE w.account_id = $1 AND w.voice_shortcut_id = ANY($10) AND w.normalized_phrase IS NOT NULL;
            RETURN QUERY
              SELECT \(unescaped: voiceRow) FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.voice_shortcut_id = ANY($10);
          END IF;
          IF cardinality($11) > 0 OR cardinality(linked_phrases) > 0 THEN
            RETURN QUERY
              SELECT \(unescaped: voiceRow) FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.normalized_phrase = ANY($11 || linked_phrases);
          END IF;
          IF cardinality($2) > 0 THEN
            RETURN QUERY
              SELECT \(unescaped: voiceRow) FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.target_bundle_id = ANY($2) AND v.target_identifier = ANY($3);
          END IF;
          IF cardinality($12) > 0 THEN
            RETURN QUERY
              SELECT \(unescaped: voiceRow) FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.target_bundle_id = ANY($12);
          END IF;
          IF cardinality($13) > 0 THEN
            RETURN QUERY
              SELECT 4, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, d.reported_key, NULL::bytea, NULL::int8, NULL::int8,
                     NULL::int8, d.device_id, NULL::uuid, NULL::bool, NULL::bool, d.installed, NULL::bytea, NULL::int4, NULL::bytea
              FROM projection_devices d WHERE d.account_id = $1 AND d.device_id = ANY($13);
          END IF;
          SELECT e.seq INTO last_seq FROM events e WHERE e.account_id = $1 AND e.device_id = $14 ORDER BY e.seq DESC LIMIT 1;
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
    /// `FoldReadStatement`'s rows for `needs` by one call of `fold_read` (`FoldReadFunction`),
    /// on Citus: the function's supersets cut down to the rows the statement reads, so that the
    /// fold is given the same rows.
    func readByDistributedFunction(
        account: UUID, needs: FoldNeeds, device: UUID?, on connection: PostgresConnection
    ) async throws -> (rows: AccountFoldRows, head: AccountHead?) {
        let bindings = try FoldReadStatement<LiveProjectionTables>(account: account, needs: needs, device: device).makeBindings()
        let rows = try await connection.guardedQuery(
            PostgresQuery(unsafeSQL: "SELECT * FROM \(FoldReadFunction.name)(\(FoldReadFunction.placeholders))", binds: bindings),
            logger: logger)
        var read: [FoldReadRow] = []
        for try await row in rows { read.append(try FoldReadRow(row)) }
        return Self.fold(Self.asTheStatementReads(read, needs: needs))
    }

    /// The rows of `read` that `FoldReadStatement` reads for `needs`: every group of each
    /// shortcut named, of each shortcut with a group among the app groups, of each app; the marks
    /// and forgets asked; every voice shortcut named, sharing a phrase asked or one a named voice
    /// shortcut has, bound to a shortcut named or to one of the apps'; the devices asked.
    static func asTheStatementReads(_ read: [FoldReadRow], needs: FoldNeeds) -> [FoldReadRow] {
        var inGroups: Set<ShortcutID> = [], phrases = needs.phrases
        for row in read {
            switch row {
            case .group(let group) where needs.shortcutsInGroups.contains(FoldNeeds.AppGroup(bundleId: group.id.shortcut.bundleId,
                                                                                            group: group.id.group)):
                inGroups.insert(group.id.shortcut)
            case .voiceShortcut(let voice) where needs.voiceShortcuts.contains(voice.id):
                if let phrase = voice.normalizedPhrase { phrases.insert(phrase) }
            default: break
            }
        }
        let targetBundles = needs.voiceTargetBundles
        return read.filter { row in
            switch row {
            case .group(let group):
                needs.shortcuts.contains(group.id.shortcut) || inGroups.contains(group.id.shortcut)
                    || needs.bundles.contains(group.id.shortcut.bundleId)
            case .mark(let scope, _): needs.marks.contains(scope)
            case .forgotten(let shortcut, _): needs.forgottenShortcuts.contains(shortcut)
            case .voiceShortcut(let voice):
                needs.voiceShortcuts.contains(voice.id) || voice.normalizedPhrase.map(phrases.contains) == true
                    || voice.target.map { target in
                        needs.shortcuts.contains(ShortcutID(bundleId: target.value.bundleId, identifier: target.value.identifier))
                            || targetBundles.contains(target.value.bundleId)
                    } == true
            case .device(let device, _): needs.devices.contains(device)
            case .account, .head: true
            }
        }
    }
}
