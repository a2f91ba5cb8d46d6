import Foundation
import ShortcutSyncDomain

/// One data-modifying arm of the fold's write: the `WITH` arm that writes one table's rows of an
/// account's batch (`FoldWriteStatement`, and after its append `AppendFoldedStatement`). Each is
/// written whole, once, here; the statements are assembled from them by `FoldSQL.statement`.
///
/// Every arm reads its rows from `go`, a one-row arm that the statement defines before it: always
/// one row in the maintenance write, one row only when the push's head check passed in the
/// push's. Their parameters are numbered once for all of them (`$1` the account, `$2`…`$50` the
/// fold's values, `FoldWriteStatement.appendValues`), so an arm reads the same in every statement.
enum FoldArm: String, CaseIterable, Sendable {
    case account
    case goneGroups = "gone_groups"
    case keptGroups = "kept_groups"
    case marks
    case shortcuts
    case shortcutSums = "shortcut_sums"
    case voiceShortcuts = "voice_shortcuts"
    case devices

    /// The arms that write something for `result`: the account's row always, each other arm
    /// when its rows are not empty.
    static func writing(_ result: AccountBatchResult) -> Set<FoldArm> {
        var arms: Set<FoldArm> = [.account]
        if result.groups.values.contains(where: { $0 == nil }) { arms.insert(.goneGroups) }
        if result.groups.values.contains(where: { $0 != nil }) { arms.insert(.keptGroups) }
        if !result.marks.isEmpty || !result.forgottenShortcuts.isEmpty { arms.insert(.marks) }
        if !result.shortcuts.isEmpty { arms.insert(.shortcuts) }
        if !result.sumsAlone.isEmpty { arms.insert(.shortcutSums) }
        if !result.voiceShortcuts.isEmpty { arms.insert(.voiceShortcuts) }
        if !result.devices.isEmpty { arms.insert(.devices) }
        return arms
    }

    /// The arm's statement, without its name.
    var sql: String {
        switch self {
        case .account:
            """
            INSERT INTO projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter, shortcut_count)
            SELECT $1, $2, $3, $4, $49 FROM go
            ON CONFLICT (account_id) DO UPDATE SET
                version = excluded.version, max_hlc_wall = excluded.max_hlc_wall, max_hlc_counter = excluded.max_hlc_counter,
                shortcut_count = excluded.shortcut_count
            """
        case .goneGroups:
            """
            DELETE FROM projection_donation_groups g
            USING go, unnest($5::text[], $6::text[], $7::text[]) AS k(b, i, g)
            WHERE g.account_id = $1 AND g.bundle_id = k.b AND g.identifier = k.i AND g.group_id = k.g
            """
        case .keptGroups:
            """
            INSERT INTO projection_donation_groups (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below, habits,
                                                    compacted)
            SELECT $1, b, i, g, n, l, p, nullif(c, ''::bytea), nullif(h, ''::bytea), nullif(z, ''::bytea)
            FROM go, unnest($8::text[], $9::text[], $10::text[], $11::int8[], $12::bytea[], $13::int8[], $14::bytea[], $43::bytea[], $50::bytea[])
                 AS k(b, i, g, n, l, p, c, h, z)
            ON CONFLICT (account_id, bundle_id, identifier, group_id) DO UPDATE SET
                donations = excluded.donations, latest_key = excluded.latest_key,
                latest_version = excluded.latest_version, covered_below = excluded.covered_below, habits = excluded.habits,
                compacted = excluded.compacted
            """
        case .marks:
            """
            INSERT INTO projection_deletion_marks (account_id, bundle_id, scope, value, key)
            SELECT $1, b, s, v, key
            FROM go, unnest($15::text[], $16::text[], $17::text[], $18::bytea[]) AS k(b, s, v, key)
            ON CONFLICT (account_id, bundle_id, scope, value) DO UPDATE SET key = excluded.key
            """
        case .shortcuts:
            """
            INSERT INTO projection_shortcuts (account_id, bundle_id, identifier, view, version, donations, latest_key, habits)
            SELECT $1, k.b, k.i,
                   coalesce(e.body, nullif(k.body, '')::jsonb)
                       || jsonb_build_object('donationCount', k.n, 'lastDonatedAt',
                                             jsonb_build_object('wallMillis', coalesce(e.hlc_wall, k.w), 'counter', coalesce(e.hlc_counter, k.c))),
                   $2, k.n, nullif(k.l, ''::bytea), nullif(k.h, ''::bytea)
            FROM go, unnest($19::text[], $20::text[], $21::int8[], $22::int8[], $40::text[], $41::int8[], $42::int8[], $44::bytea[], $45::bytea[])
                 AS k(b, i, p, n, body, w, c, l, h)
            LEFT JOIN LATERAL (SELECT e.body, e.hlc_wall, e.hlc_counter FROM events e
                               WHERE e.account_id = $1 AND e.version = k.p AND k.body = '' OFFSET 0) e ON true
            ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET
                view = excluded.view, version = excluded.version,
                donations = excluded.donations, latest_key = excluded.latest_key, habits = excluded.habits
            """
        case .shortcutSums:
            // Sums changed with the view unchanged (a sign-out): the row keeps its version, so
            // no pull sends it again.
            """
            UPDATE projection_shortcuts s SET habits = nullif(k.h, ''::bytea)
            FROM go, unnest($46::text[], $47::text[], $48::bytea[]) AS k(b, i, h)
            WHERE s.account_id = $1 AND s.bundle_id = k.b AND s.identifier = k.i
            """
        case .voiceShortcuts:
            """
            INSERT INTO projection_voice_shortcuts AS t (account_id, voice_shortcut_id, view, version, deleted, target_key, target_bundle_id,
                target_identifier, target_title, phrase_key, phrase, normalized_phrase, conflicts_with, target_available)
            SELECT $1, id, nullif(view, '')::jsonb, v, deleted,
                   nullif(tk, ''::bytea), CASE WHEN tk <> ''::bytea THEN tb END, CASE WHEN tk <> ''::bytea THEN ti END,
                   CASE WHEN tk <> ''::bytea THEN tt END,
                   nullif(pk, ''::bytea), CASE WHEN pk <> ''::bytea THEN ph END, CASE WHEN pk <> ''::bytea THEN np END,
                   nullif(owner, '00000000-0000-0000-0000-000000000000'::uuid), available
            FROM go, unnest($23::uuid[], $24::text[], $25::int8[], $26::bool[], $27::bytea[], $28::text[], $29::text[], $30::text[],
                        $31::bytea[], $32::text[], $33::text[], $34::uuid[], $35::bool[])
                 AS k(id, view, v, deleted, tk, tb, ti, tt, pk, ph, np, owner, available)
            ON CONFLICT (account_id, voice_shortcut_id) DO UPDATE SET
                view = excluded.view,
                -- 0: the view did not change, and neither does the version it changed at.
                version = CASE WHEN excluded.version = 0 THEN t.version ELSE excluded.version END,
                deleted = excluded.deleted, target_key = excluded.target_key, target_bundle_id = excluded.target_bundle_id,
                target_identifier = excluded.target_identifier, target_title = excluded.target_title, phrase_key = excluded.phrase_key,
                phrase = excluded.phrase, normalized_phrase = excluded.normalized_phrase, conflicts_with = excluded.conflicts_with,
                target_available = excluded.target_available
            """
        case .devices:
            """
            INSERT INTO projection_devices AS t (account_id, device_id, installed, reported_key, apps_version)
            SELECT $1, d, installed::text[], k, r
            FROM go, unnest($36::uuid[], $37::text[], $38::bytea[], $39::int8[]) AS k(d, installed, k, r)
            ON CONFLICT (account_id, device_id) DO UPDATE SET
                installed = excluded.installed, reported_key = excluded.reported_key,
                apps_version = t.apps_version + excluded.apps_version
            """
        }
    }
}

extension AccountBatchResult {
    /// The sums of the shortcuts whose view did not change (a sign-out's), in key order: what the
    /// `shortcut_sums` arm writes. A shortcut whose view changed has its sums written with it.
    var sumsAlone: [(shortcut: ShortcutID, sums: ShortcutHabits)] {
        shortcutSums.filter { shortcuts[$0.key] == nil }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
