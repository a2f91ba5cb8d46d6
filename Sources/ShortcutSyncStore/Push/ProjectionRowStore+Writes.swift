import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// Writes back what one account's batch changed, in one statement (`FoldWriteStatement`)
    /// that names the account in every reference to a table (its rows' other keys come as
    /// unnest arrays).
    public func write(account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        switch tables {
        case .live: _ = try await connection.guardedExecute(try FoldWriteStatement<LiveProjectionTables>(account: account, result), logger: logger)
        case .rebuild: _ = try await connection.guardedExecute(try FoldWriteStatement<RebuildProjectionTables>(account: account, result), logger: logger)
        }
    }
}

extension FoldSQL {
    /// `FoldWriteStatement`'s text for the live tables.
    static let write = """
        WITH go AS (
            SELECT 1
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
        SELECT 1
        """
}

extension ProjectionRowStore {
    /// A text[] literal (`{"a","b"}`), cast per row: unnest cannot take an array of arrays.
    static func arrayLiteral(_ values: [String]) -> String {
        let quoted = values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}

extension UUID {
    /// All zero bits: stands for NULL in a uuid column array.
    static let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Byte-wise order, for writing rows in a stable order (fewer lock waits between writers).
    func isOrderedBefore(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { lhs in withUnsafeBytes(of: other.uuid) { rhs in lhs.lexicographicallyPrecedes(rhs) } }
    }
}

extension PostgresBindings {
    /// A batch's events as the six column arrays the append statements unnest: ids, seqs, types,
    /// wall clocks, counters and stored bodies.
    mutating func appendColumns(of batch: ArraySlice<Event>, bodies: [String]) {
        append(batch.map(\.id))
        append(batch.map(\.seq))
        append(batch.map(\.type.rawValue))
        append(batch.map(\.hlc.wallMillis))
        append(batch.map { Int64($0.hlc.counter) })
        append(bodies)
    }
}
