import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionTables {
    /// The live tables' statement `sql` for this set: the rebuild's tables have the live ones'
    /// names in the `rebuild` schema. (Every `projection_` in the fold statements is a table name.)
    func qualifying(_ sql: String) -> String {
        prefix.isEmpty ? sql : sql.replacingOccurrences(of: "projection_", with: prefix + "projection_")
    }
}

/// Everything an account's batch needs from its stored rows, in one round trip (DESIGN §6):
/// the account's row, the donation groups, deletion marks, voice shortcuts and devices that the
/// batch touches, and the account's head (with the pushing device's last seq, when one is
/// given: what an optimistic push checks, `PostgresEventStore`). Each part is one arm of a `UNION ALL` in a common row shape, told apart by its
/// first column; every reference to a table names the account (`account_id = $1`), so that on
/// Citus the statement goes to the account's shard alone (§9).
///
/// Prepared (once per connection and table set): PostgreSQL parses and plans it once, not at
/// every push, and that plan cannot see the arrays. So each stored row is looked up by its key
/// for each wanted key, in a `LATERAL` subquery fenced with `OFFSET 0` (which PostgreSQL does
/// not merge into a join): a plan that joined the arrays to the account's rows could scan all of
/// them, the cost of the account's size instead of the batch's (`GenericPlanTests`).
struct FoldReadStatement<Tables: ProjectionTableSet>: PostgresPreparedStatement {
    static var sql: String { Tables.readSQL }
    static var name: String { Tables.readName }

    var account: UUID
    var needs: FoldNeeds
    /// The device whose last seq the head row carries (0 without one).
    var device: UUID?
}

extension FoldSQL {
    /// `FoldReadStatement`'s text for the live tables: the stored rows every part of a batch may need.
    static let read = statement(readKeys, then: [accountPart, groupsPart, marksPart, voicesPart, devicesPart, headPart].joined(separator: "\nUNION ALL\n"))

    /// The keys the whole read looks up, as `WITH` arms: the groups of the shortcuts, groups and apps
    /// of `$2`…`$6`, and the voice shortcuts of `$10`…`$12` with those sharing their phrases.
    static let readKeys: [(name: String, sql: String)] = [
        ("wanted_groups", """
            SELECT k.b, k.i FROM unnest($2::text[], $3::text[]) AS k(b, i)
            UNION
            SELECT h.bundle_id, h.identifier
            FROM unnest($4::text[], $5::text[]) AS k(b, g)
            CROSS JOIN LATERAL (SELECT h.bundle_id, h.identifier FROM projection_donation_groups h
                                WHERE h.account_id = $1 AND h.bundle_id = k.b AND h.group_id = k.g OFFSET 0) h
            UNION
            SELECT h.bundle_id, h.identifier
            FROM unnest($6::text[]) AS k(b)
            CROSS JOIN LATERAL (SELECT h.bundle_id, h.identifier FROM projection_donation_groups h
                                WHERE h.account_id = $1 AND h.bundle_id = k.b OFFSET 0) h
            """),
        ("voice_ids", "SELECT * FROM unnest($10::uuid[]) AS k(id)"),
        ("voice_phrases", """
            SELECT * FROM unnest($11::text[]) AS k(p)
            UNION
            SELECT w.normalized_phrase FROM voice_ids
            CROSS JOIN LATERAL (SELECT w.normalized_phrase FROM projection_voice_shortcuts w
                                WHERE w.account_id = $1 AND w.voice_shortcut_id = voice_ids.id AND w.normalized_phrase IS NOT NULL OFFSET 0) w
            """),
        ("wanted_voices", """
            SELECT id FROM voice_ids
            UNION
            SELECT v.voice_shortcut_id FROM voice_phrases
            CROSS JOIN LATERAL (SELECT v.voice_shortcut_id FROM projection_voice_shortcuts v
                                WHERE v.account_id = $1 AND v.normalized_phrase = voice_phrases.p OFFSET 0) v
            UNION
            SELECT v.voice_shortcut_id FROM unnest($2::text[], $3::text[]) AS k(b, i)
            CROSS JOIN LATERAL (SELECT v.voice_shortcut_id FROM projection_voice_shortcuts v
                                WHERE v.account_id = $1 AND v.target_bundle_id = k.b AND v.target_identifier = k.i OFFSET 0) v
            UNION
            SELECT v.voice_shortcut_id FROM unnest($12::text[]) AS k(b)
            CROSS JOIN LATERAL (SELECT v.voice_shortcut_id FROM projection_voice_shortcuts v
                                WHERE v.account_id = $1 AND v.target_bundle_id = k.b OFFSET 0) v
            """),
    ]

    /// The account's row (part 0).
    static let accountPart = """
        SELECT 0 AS part, NULL::text AS s1, NULL::text AS s2, NULL::text AS s3, NULL::text AS s4, NULL::text AS s5,
               NULL::bytea AS k1, NULL::bytea AS k2, a.version AS n1, a.max_hlc_wall AS n2, a.max_hlc_counter AS n3,
               NULL::uuid AS u1, NULL::uuid AS u2, NULL::bool AS f1, NULL::bool AS f2, NULL::text[] AS installed, a.learning AS k3,
               a.shortcut_count AS n4, a.horizon AS k4
        FROM projection_accounts a WHERE a.account_id = $1
        """

    /// The wanted groups' rows (part 1), from `wanted_groups`.
    static let groupsPart = """
        SELECT 1, g.bundle_id, g.identifier, g.group_id, NULL, NULL, g.latest_key, g.covered_below, g.donations, g.latest_version, NULL,
               NULL, NULL, NULL, NULL, NULL, g.habits, NULL, g.compacted
        FROM wanted_groups w
        CROSS JOIN LATERAL (SELECT g.* FROM projection_donation_groups g
                            WHERE g.account_id = $1 AND g.bundle_id = w.b AND g.identifier = w.i OFFSET 0) g
        """

    /// The deletion marks and shortcuts' forgets of `$7`…`$9` (part 2).
    static let marksPart = """
        SELECT 2, m.bundle_id, m.scope, m.value, NULL, NULL, m.key, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM unnest($7::text[], $8::text[], $9::text[]) AS k(b, s, v)
        CROSS JOIN LATERAL (SELECT m.* FROM projection_deletion_marks m
                            WHERE m.account_id = $1 AND m.bundle_id = k.b AND m.scope = k.s AND m.value = k.v OFFSET 0) m
        WHERE k.s <> 'forget' OR (SELECT a.forgets_shortcuts FROM projection_accounts a WHERE a.account_id = $1)
        """

    /// The wanted voice shortcuts (part 3), from `wanted_voices`.
    static let voicesPart = """
        SELECT 3, v.target_bundle_id, v.target_identifier, v.target_title, v.phrase, v.normalized_phrase, v.target_key, v.phrase_key,
               NULL, NULL, NULL, v.voice_shortcut_id, v.conflicts_with, v.deleted, v.target_available, NULL, NULL, NULL, NULL
        FROM wanted_voices w
        CROSS JOIN LATERAL (SELECT v.* FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.voice_shortcut_id = w.id OFFSET 0) v
        """

    /// The devices of `$13` (part 4).
    static let devicesPart = """
        SELECT 4, NULL, NULL, NULL, NULL, NULL, d.reported_key, NULL, NULL, NULL, NULL, d.device_id, NULL, NULL, NULL, d.installed, NULL, NULL, NULL
        FROM unnest($13::uuid[]) AS k(d)
        CROSS JOIN LATERAL (SELECT d.* FROM projection_devices d WHERE d.account_id = $1 AND d.device_id = k.d OFFSET 0) d
        """

    /// The head, with the last seq of the device `$14` (part 5) and the head row's mark (`AccountHead.mark`).
    static let headPart = """
        SELECT 5, \(AccountHead.markSQL), NULL, NULL, NULL, NULL, NULL, NULL, h.version, h.folded_version,
               coalesce((SELECT e.seq FROM events e WHERE e.account_id = $1 AND e.device_id = $14 ORDER BY e.seq DESC LIMIT 1), 0),
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM account_heads h WHERE h.account_id = $1
        """
}

extension FoldReadStatement {
    func makeBindings() throws -> PostgresBindings {
        let shortcuts = needs.shortcutColumns, marks = needs.storedMarks
        var groups = (bundles: [String](), groups: [String]())
        for group in needs.shortcutsInGroups { groups.bundles.append(group.bundleId); groups.groups.append(group.group) }
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(account)
        bindings.append(shortcuts.bundles)
        bindings.append(shortcuts.identifiers)
        bindings.append(groups.bundles)
        bindings.append(groups.groups)
        bindings.append(Array(needs.bundles))
        bindings.append(marks.bundles)
        bindings.append(marks.scopes)
        bindings.append(marks.values)
        bindings.append(Array(needs.voiceShortcuts))
        bindings.append(Array(needs.phrases))
        bindings.append(Array(needs.voiceTargetBundles))
        bindings.append(Array(needs.devices))
        bindings.append(device)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> FoldReadRow {
        try FoldReadRow(row)
    }
}

extension FoldNeeds {
    /// The shortcuts the batch reads, as two columns (`$2`, `$3` of the reads).
    var shortcutColumns: (bundles: [String], identifiers: [String]) {
        var columns = (bundles: [String](), identifiers: [String]())
        for shortcut in shortcuts { columns.bundles.append(shortcut.bundleId); columns.identifiers.append(shortcut.identifier) }
        return columns
    }

    /// The deletion marks and shortcuts' forgets the batch reads, as their stored columns.
    var storedMarks: StoredScopes {
        var marks = StoredScopes()
        for scope in self.marks { marks.append(scope) }
        for shortcut in forgottenShortcuts { marks.append(forgotten: shortcut) }
        return marks
    }
}
