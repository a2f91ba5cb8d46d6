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

/// What one account's batch changed, written back in one round trip: the account's row, then
/// one data-modifying arm per table (each writes nothing when its arrays are empty). Every arm
/// writes only when `go` has its row: here always; in `AppendFoldedStatement`, which runs these
/// arms after its append, only when the append's check passed. A
/// projected shortcut is the event at its latest donation's version with its count and
/// `lastDonatedAt` added: the fold decides which donation that is, the row copies its attributes
/// (looked up by its version in a fenced `LATERAL` subquery, as `FoldReadStatement` reads: a
/// plan made without the arrays joined them to every event of the account). The deletion of
/// donation groups is still a join: a plan may read the account's groups for it, which only a
/// batch with a deletion that empties a group pays.
struct FoldWriteStatement<Tables: ProjectionTableSet>: PostgresPreparedStatement {
    static var sql: String { Tables.tables.qualifying(FoldSQL.write) }

    private var bindings: PostgresBindings
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

extension FoldWriteStatement {
    init(account: UUID, _ result: AccountBatchResult) throws {
        var bindings = PostgresBindings(capacity: 42)
        bindings.append(account)
        try Self.appendValues(of: result, unstored: .none, to: &bindings)
        self.bindings = bindings
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws {}

    /// The statement's values after the account (`$2`…`$43`), in order. `unstored`: the events
    /// appended by the same statement (`AppendFoldedStatement`), which cannot read them back from
    /// the events table: a shortcut whose latest donation is one of them takes its attributes
    /// from here.
    static func appendValues(of result: AccountBatchResult, unstored: UnstoredEvents, to bindings: inout PostgresBindings) throws {
        bindings.append(result.version)
        bindings.append(result.maxHLC.wallMillis)
        bindings.append(Int64(result.maxHLC.counter))

        var gone = (bundles: [String](), identifiers: [String](), groups: [String]())
        var kept = (bundles: [String](), identifiers: [String](), groups: [String](),
                    counts: [Int64](), latest: [ByteBuffer](), versions: [Int64](), covered: [ByteBuffer](), habits: [ByteBuffer]())
        // In key order, as every writer of these rows: fewer lock waits between writers.
        for (id, row) in result.groups.sorted(by: { $0.key < $1.key }) {
            if let row {
                kept.bundles.append(id.shortcut.bundleId)
                kept.identifiers.append(id.shortcut.identifier); kept.groups.append(id.group)
                kept.counts.append(Int64(row.count)); kept.latest.append(row.latest.stored)
                kept.versions.append(row.latestVersion); kept.covered.append(row.coveredBelow?.stored ?? ByteBuffer())
                kept.habits.append(row.habits.bytes.map { ByteBuffer(bytes: $0) } ?? ByteBuffer())
            } else {
                gone.bundles.append(id.shortcut.bundleId)
                gone.identifiers.append(id.shortcut.identifier); gone.groups.append(id.group)
            }
        }
        bindings.append(gone.bundles); bindings.append(gone.identifiers); bindings.append(gone.groups)
        bindings.append(kept.bundles); bindings.append(kept.identifiers); bindings.append(kept.groups)
        bindings.append(kept.counts); bindings.append(kept.latest); bindings.append(kept.versions); bindings.append(kept.covered)

        var marks = StoredScopes()
        var keys: [ByteBuffer] = []
        for (scope, key) in result.marks {
            marks.append(scope)
            keys.append(key.stored)
        }
        bindings.append(marks.bundles); bindings.append(marks.scopes); bindings.append(marks.values); bindings.append(keys)

        var shortcuts = (bundles: [String](), identifiers: [String](), latest: [Int64](), counts: [Int64](),
                         bodies: [String](), walls: [Int64](), counters: [Int64]())
        for (shortcut, projection) in result.shortcuts.sorted(by: { $0.key < $1.key }) {
            shortcuts.bundles.append(shortcut.bundleId); shortcuts.identifiers.append(shortcut.identifier)
            // Version 0 holds no event: the shortcut left the view, its row becomes a tombstone.
            shortcuts.latest.append(projection?.latestVersion ?? 0)
            shortcuts.counts.append(Int64(projection?.donationCount ?? 0))
            let event = projection.flatMap { unstored.event(at: $0.latestVersion) }
            shortcuts.bodies.append(event?.body ?? "")
            shortcuts.walls.append(event?.hlc.wallMillis ?? 0)
            shortcuts.counters.append(Int64(event?.hlc.counter ?? 0))
        }
        bindings.append(shortcuts.bundles); bindings.append(shortcuts.identifiers)
        bindings.append(shortcuts.latest); bindings.append(shortcuts.counts)

        var voices = VoiceShortcutColumns()
        for change in result.voiceShortcuts {
            try voices.append(change, version: change.viewChanged ? result.version : 0)
        }
        bindings.append(voices.ids); bindings.append(voices.views); bindings.append(voices.versions); bindings.append(voices.deleted)
        bindings.append(voices.targetKeys); bindings.append(voices.targetBundles); bindings.append(voices.targetIdentifiers)
        bindings.append(voices.targetTitles); bindings.append(voices.phraseKeys); bindings.append(voices.phrases)
        bindings.append(voices.normalized); bindings.append(voices.owners); bindings.append(voices.available)

        var devices = (ids: [UUID](), installed: [String](), keys: [ByteBuffer](), raises: [Int64]())
        for (device, change) in result.devices.sorted(by: { $0.key.isOrderedBefore($1.key) }) {
            devices.ids.append(device)
            devices.installed.append(ProjectionRowStore.arrayLiteral(change.reported.value.sorted()))
            devices.keys.append(change.reported.key.stored)
            devices.raises.append(change.appsChanged ? 1 : 0)
        }
        bindings.append(devices.ids); bindings.append(devices.installed); bindings.append(devices.keys); bindings.append(devices.raises)
        bindings.append(shortcuts.bodies); bindings.append(shortcuts.walls); bindings.append(shortcuts.counters)
        // $43: the donation groups' suggestion sums, last so the other parameters keep their numbers.
        bindings.append(kept.habits)
    }
}

extension ProjectionRowStore {
    /// A text[] literal (`{"a","b"}`), cast per row: unnest cannot take an array of arrays.
    static func arrayLiteral(_ values: [String]) -> String {
        let quoted = values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}

/// One account's voice shortcut rows as the column arrays of `unnest`; "" and empty bytes stand
/// for NULL.
private struct VoiceShortcutColumns {
    var ids: [UUID] = [], views: [String] = [], versions: [Int64] = [], deleted: [Bool] = []
    var targetKeys: [ByteBuffer] = [], targetBundles: [String] = [], targetIdentifiers: [String] = [], targetTitles: [String] = []
    var phraseKeys: [ByteBuffer] = [], phrases: [String] = [], normalized: [String] = [], owners: [UUID] = [], available: [Bool] = []
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    mutating func append(_ change: VoiceShortcutChange, version: Int64) throws {
        let row = change.row
        ids.append(row.id)
        views.append(try row.view.map { String(decoding: try encoder.encode($0), as: UTF8.self) } ?? "")
        versions.append(version); deleted.append(row.deleted)
        targetKeys.append(row.target?.key.stored ?? ByteBuffer())
        targetBundles.append(row.target?.value.bundleId ?? ""); targetIdentifiers.append(row.target?.value.identifier ?? "")
        targetTitles.append(row.target?.value.title ?? "")
        phraseKeys.append(row.phrase?.key.stored ?? ByteBuffer()); phrases.append(row.phrase?.value ?? "")
        normalized.append(row.normalizedPhrase ?? "")
        owners.append(row.conflictsWith ?? UUID.zero); available.append(row.targetAvailable)
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

/// The events a statement appends itself, after `afterVersion`, with their stored bodies (made
/// once, for the insert).
struct UnstoredEvents {
    var afterVersion: Int64
    var events: ArraySlice<Event>
    var bodies: [String]

    static let none = UnstoredEvents(afterVersion: 0, events: [], bodies: [])

    func event(at version: Int64) -> (body: String, hlc: HLCTimestamp)? {
        guard version > afterVersion, version - afterVersion <= Int64(bodies.count) else { return nil }
        let offset = Int(version - afterVersion - 1)
        return (bodies[offset], events[events.index(events.startIndex, offsetBy: offset)].hlc)
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
