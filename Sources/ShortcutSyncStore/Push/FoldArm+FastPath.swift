import Foundation

extension FoldArm {
    /// Each arm as single-row statements, one a row, for `PushWriteFunction`'s body on Citus
    /// (issue 66, item 1): an `INSERT … VALUES`, an `UPDATE` or a `DELETE` of one table whose
    /// `WHERE` names `account_id = $1` is a fast-path router statement, planned without Citus's
    /// distributed planner and run on the local shard, where an `INSERT … SELECT` (`routedSQL`,
    /// pushed down through `go`) is planned against every shard each time. Measured on the
    /// tests' cluster (`FastPathRows`): a one-row arm as a fast-path statement about 0.1 ms on the
    /// worker, as `routedSQL` about 1 ms; a row more about 0.06 ms against a few µs. So the
    /// body takes this form up to `FastPathRows.maximum` rows and `routedSQL` past it.
    ///
    /// `rows` is the parameter whose length is the arm's number of rows; `body` reads row `ix`
    /// of each array (the same `$1`…`$50` as `sql`, the same values as its `unnest`'s columns,
    /// in their order there). Nothing here is a subquery: a statement with one is not fast-path.
    static let fastPathSQL: [FoldArm: (rows: String, body: String)] = [
        .account: ("1", """
            INSERT INTO projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter, shortcut_count)
            VALUES ($1, $2, $3, $4, $49)
            ON CONFLICT (account_id) DO UPDATE SET
                version = excluded.version, max_hlc_wall = excluded.max_hlc_wall, max_hlc_counter = excluded.max_hlc_counter,
                shortcut_count = excluded.shortcut_count;
            """),
        .goneGroups: ("$5", """
            DELETE FROM projection_donation_groups g
            WHERE g.account_id = $1 AND g.bundle_id = $5[ix] AND g.identifier = $6[ix] AND g.group_id = $7[ix];
            """),
        .keptGroups: ("$8", """
            INSERT INTO projection_donation_groups (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below, habits,
                                                    compacted)
            VALUES ($1, $8[ix], $9[ix], $10[ix], $11[ix], $12[ix], $13[ix], nullif($14[ix], ''::bytea), nullif($43[ix], ''::bytea),
                    nullif($50[ix], ''::bytea))
            ON CONFLICT (account_id, bundle_id, identifier, group_id) DO UPDATE SET
                donations = excluded.donations, latest_key = excluded.latest_key,
                latest_version = excluded.latest_version, covered_below = excluded.covered_below, habits = excluded.habits,
                compacted = excluded.compacted;
            """),
        .marks: ("$15", """
            INSERT INTO projection_deletion_marks (account_id, bundle_id, scope, value, key)
            VALUES ($1, $15[ix], $16[ix], $17[ix], $18[ix])
            ON CONFLICT (account_id, bundle_id, scope, value) DO UPDATE SET key = excluded.key;
            """),
        // The view's body is the event's when the fold sent none (`''`): read first, by its
        // version, a fast-path statement of its own (in `sql` a lateral join).
        .shortcuts: ("$19", """
            event_body := NULL; event_wall := NULL; event_counter := NULL;
            IF $40[ix] = '' THEN
              SELECT e.body, e.hlc_wall, e.hlc_counter INTO event_body, event_wall, event_counter
              FROM events e WHERE e.account_id = $1 AND e.version = $21[ix];
            END IF;
            INSERT INTO projection_shortcuts (account_id, bundle_id, identifier, view, version, donations, latest_key, habits)
            VALUES ($1, $19[ix], $20[ix],
                    coalesce(event_body, nullif($40[ix], '')::jsonb)
                        || jsonb_build_object('donationCount', $22[ix], 'lastDonatedAt',
                                              jsonb_build_object('wallMillis', coalesce(event_wall, $41[ix]), 'counter', coalesce(event_counter, $42[ix]))),
                    $2, $22[ix], nullif($44[ix], ''::bytea), nullif($45[ix], ''::bytea))
            ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET
                view = excluded.view, version = excluded.version,
                donations = excluded.donations, latest_key = excluded.latest_key, habits = excluded.habits;
            """),
        .shortcutSums: ("$46", """
            UPDATE projection_shortcuts s SET habits = nullif($48[ix], ''::bytea)
            WHERE s.account_id = $1 AND s.bundle_id = $46[ix] AND s.identifier = $47[ix];
            """),
        .voiceShortcuts: ("$23", """
            INSERT INTO projection_voice_shortcuts AS t (account_id, voice_shortcut_id, view, version, deleted, target_key, target_bundle_id,
                target_identifier, target_title, phrase_key, phrase, normalized_phrase, conflicts_with, target_available)
            VALUES ($1, $23[ix], nullif($24[ix], '')::jsonb, $25[ix], $26[ix],
                    nullif($27[ix], ''::bytea), CASE WHEN $27[ix] <> ''::bytea THEN $28[ix] END, CASE WHEN $27[ix] <> ''::bytea THEN $29[ix] END,
                    CASE WHEN $27[ix] <> ''::bytea THEN $30[ix] END,
                    nullif($31[ix], ''::bytea), CASE WHEN $31[ix] <> ''::bytea THEN $32[ix] END, CASE WHEN $31[ix] <> ''::bytea THEN $33[ix] END,
                    nullif($34[ix], '00000000-0000-0000-0000-000000000000'::uuid), $35[ix])
            ON CONFLICT (account_id, voice_shortcut_id) DO UPDATE SET
                view = excluded.view,
                version = CASE WHEN excluded.version = 0 THEN t.version ELSE excluded.version END,
                deleted = excluded.deleted, target_key = excluded.target_key, target_bundle_id = excluded.target_bundle_id,
                target_identifier = excluded.target_identifier, target_title = excluded.target_title, phrase_key = excluded.phrase_key,
                phrase = excluded.phrase, normalized_phrase = excluded.normalized_phrase, conflicts_with = excluded.conflicts_with,
                target_available = excluded.target_available;
            """),
        .devices: ("$36", """
            INSERT INTO projection_devices AS t (account_id, device_id, installed, reported_key, apps_version)
            VALUES ($1, $36[ix], $37[ix]::text[], $38[ix], $39[ix])
            ON CONFLICT (account_id, device_id) DO UPDATE SET
                installed = excluded.installed, reported_key = excluded.reported_key,
                apps_version = t.apps_version + excluded.apps_version;
            """),
    ]
}

/// Up to how many rows an arm (and the batch) of `PushWriteFunction` is written as fast-path
/// statements, one a row, rather than as one `INSERT … SELECT` (`FoldArm.fastPathSQL`).
enum FastPathRows {
    static let maximum = 10
}
