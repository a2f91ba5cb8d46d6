import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// A push's append and the write of its fold in one statement, committed on its own (no
/// transaction around it): the optimistic push of `PostgresEventStore` (DESIGN §6).
///
/// The fold was computed beforehand from rows read at the head `expectedVersion`. The statement
/// moves the head only when it is still at that version and current (its folded version equal
/// to it) and the device's last seq is still the one before the batch: then no fold of the
/// account committed since those rows were read (every fold moves the folded version), so the
/// fold is exact. That one `UPDATE` is the check and the lock: a push of the same account that
/// comes at the same moment waits for it, then finds the head moved and writes nothing. The
/// batch and the fold's rows are written only when the head moved (`moved`, `go`). Otherwise it
/// writes nothing and answers 0; the push then goes the locking way.
///
/// The head is updated in place (a HOT update, migration 0014): no index reads the versions.
///
/// Its fold arms (`account` … `devices`) are `FoldWriteStatement`'s, word for word and with the
/// same parameters `$1`…`$43`; the append's parameters follow them (`$44`…`$53`).
/// `AppendFoldedStatementTests` fails when the two texts part.
struct AppendFoldedStatement: PostgresPreparedStatement {
    static let sql = """
        WITH moved AS (
            UPDATE account_heads h SET version = $53, folded_version = $53
            WHERE h.account_id = $1 AND h.version = $45 AND h.folded_version = $45
              AND coalesce((SELECT e.seq FROM events e WHERE e.account_id = $1 AND e.device_id = $44 ORDER BY e.seq DESC LIMIT 1), 0) = $52
            RETURNING 1
        ), inserted AS (
            INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body)
            SELECT $1, $45 + b.ord, $44, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb
            FROM moved, unnest($46::uuid[], $47::int8[], $48::text[], $49::int8[], $50::int8[], $51::text[])
                 WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord)
            RETURNING 1
        ), go AS (
            SELECT 1 FROM moved
        ), account AS (
            INSERT INTO projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter)
            SELECT $1, $2, $3, $4 FROM go
            ON CONFLICT (account_id) DO UPDATE SET
                version = excluded.version, max_hlc_wall = excluded.max_hlc_wall, max_hlc_counter = excluded.max_hlc_counter
        ), gone_groups AS (
            DELETE FROM projection_donation_groups g
            USING go, unnest($5::text[], $6::text[], $7::text[]) AS k(b, i, g)
            WHERE g.account_id = $1 AND g.bundle_id = k.b AND g.identifier = k.i AND g.group_id = k.g
        ), kept_groups AS (
            INSERT INTO projection_donation_groups (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below, habits)
            SELECT $1, b, i, g, n, l, p, nullif(c, ''::bytea), nullif(h, ''::bytea)
            FROM go, unnest($8::text[], $9::text[], $10::text[], $11::int8[], $12::bytea[], $13::int8[], $14::bytea[], $43::bytea[])
                 AS k(b, i, g, n, l, p, c, h)
            ON CONFLICT (account_id, bundle_id, identifier, group_id) DO UPDATE SET
                donations = excluded.donations, latest_key = excluded.latest_key,
                latest_version = excluded.latest_version, covered_below = excluded.covered_below, habits = excluded.habits
        ), marks AS (
            INSERT INTO projection_deletion_marks (account_id, bundle_id, scope, value, key)
            SELECT $1, b, s, v, key
            FROM go, unnest($15::text[], $16::text[], $17::text[], $18::bytea[]) AS k(b, s, v, key)
            ON CONFLICT (account_id, bundle_id, scope, value) DO UPDATE SET key = excluded.key
        ), shortcuts AS (
            INSERT INTO projection_shortcuts (account_id, bundle_id, identifier, view, version)
            SELECT $1, k.b, k.i,
                   coalesce(e.body, nullif(k.body, '')::jsonb)
                       || jsonb_build_object('donationCount', k.n, 'lastDonatedAt',
                                             jsonb_build_object('wallMillis', coalesce(e.hlc_wall, k.w), 'counter', coalesce(e.hlc_counter, k.c))),
                   $2
            FROM go, unnest($19::text[], $20::text[], $21::int8[], $22::int8[], $40::text[], $41::int8[], $42::int8[]) AS k(b, i, p, n, body, w, c)
            LEFT JOIN LATERAL (SELECT e.body, e.hlc_wall, e.hlc_counter FROM events e
                               WHERE e.account_id = $1 AND e.version = k.p AND k.body = '' OFFSET 0) e ON true
            ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET view = excluded.view, version = excluded.version
        ), voice_shortcuts AS (
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
        ), devices AS (
            INSERT INTO projection_devices AS t (account_id, device_id, installed, reported_key, apps_version)
            SELECT $1, d, installed::text[], k, r
            FROM go, unnest($36::uuid[], $37::text[], $38::bytea[], $39::int8[]) AS k(d, installed, k, r)
            ON CONFLICT (account_id, device_id) DO UPDATE SET
                installed = excluded.installed, reported_key = excluded.reported_key,
                apps_version = t.apps_version + excluded.apps_version
        )
        SELECT count(*) FROM inserted
        """

    var account: UUID
    var device: UUID
    /// Not empty.
    var batch: ArraySlice<Event>
    var expectedVersion: Int64
    var result: AccountBatchResult

    func makeBindings() throws -> PostgresBindings {
        let bodies = batch.map(\.body.fieldsJSON)
        var bindings = PostgresBindings(capacity: 53)
        bindings.append(account)
        try FoldWriteStatement<LiveProjectionTables>.appendValues(
            of: result, unstored: UnstoredEvents(afterVersion: expectedVersion, events: batch, bodies: bodies), to: &bindings)
        bindings.append(device)
        bindings.append(expectedVersion)
        bindings.appendColumns(of: batch, bodies: bodies)
        bindings.append(batch.first.map { $0.seq - 1 } ?? 0)
        bindings.append(expectedVersion + Int64(batch.count))
        return bindings
    }

    /// How many events it appended: the batch's count, or 0 when its check failed.
    func decodeRow(_ row: PostgresRow) throws -> Int {
        Int(try row.decode(Int64.self))
    }
}
