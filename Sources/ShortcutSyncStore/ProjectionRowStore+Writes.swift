import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// Writes back what one account's batch changed, one statement per table, each naming the
    /// account (its rows' other keys come as unnest arrays).
    ///
    /// A projected shortcut is the event at its latest donation's position with its count and
    /// `lastDonatedAt` added: the fold decides which donation that is, the row copies its attributes.
    public func write(account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        try await writeAccount(account, result, on: connection)
        try await writeGroups(account, result, on: connection)
        try await writeMarks(account, result, on: connection)
        try await writeShortcuts(account, result, on: connection)
        try await writeVoiceShortcuts(account, result, on: connection)
        try await writeDevices(account, result, on: connection)
    }

    private func writeAccount(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter)
            VALUES (\(account), \(result.version), \(result.maxHLC.wallMillis), \(Int64(result.maxHLC.counter)))
            ON CONFLICT (account_id) DO UPDATE SET
                version = excluded.version, max_hlc_wall = excluded.max_hlc_wall, max_hlc_counter = excluded.max_hlc_counter
            """, logger: logger)
    }

    private func writeGroups(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        var gone = (bundles: [String](), identifiers: [String](), groups: [String]())
        var kept = (bundles: [String](), identifiers: [String](), groups: [String](),
                    counts: [Int64](), latest: [ByteBuffer](), positions: [Int64](), covered: [ByteBuffer]())
        for (id, row) in result.groups.sorted(by: { $0.key < $1.key }) {
            if let row {
                kept.bundles.append(id.shortcut.bundleId)
                kept.identifiers.append(id.shortcut.identifier); kept.groups.append(id.group)
                kept.counts.append(Int64(row.count)); kept.latest.append(row.latest.stored)
                kept.positions.append(row.latestVersion); kept.covered.append(row.coveredBelow?.stored ?? ByteBuffer())
            } else {
                gone.bundles.append(id.shortcut.bundleId)
                gone.identifiers.append(id.shortcut.identifier); gone.groups.append(id.group)
            }
        }
        let table = "\(tables.prefix)projection_donation_groups"
        if !gone.bundles.isEmpty {
            try await connection.guardedQuery("""
                DELETE FROM \(unescaped: table) g
                USING unnest(\(gone.bundles)::text[], \(gone.identifiers)::text[], \(gone.groups)::text[]) AS k(b, i, g)
                WHERE g.account_id = \(account) AND g.bundle_id = k.b AND g.identifier = k.i AND g.group_id = k.g
                """, logger: logger)
        }
        if !kept.bundles.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: table) (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below)
                SELECT \(account), b, i, g, n, l, p, nullif(c, ''::bytea)
                FROM unnest(\(kept.bundles)::text[], \(kept.identifiers)::text[], \(kept.groups)::text[],
                            \(kept.counts)::int8[], \(kept.latest)::bytea[], \(kept.positions)::int8[], \(kept.covered)::bytea[])
                     AS k(b, i, g, n, l, p, c)
                ON CONFLICT (account_id, bundle_id, identifier, group_id) DO UPDATE SET
                    donations = excluded.donations, latest_key = excluded.latest_key,
                    latest_version = excluded.latest_version, covered_below = excluded.covered_below
                """, logger: logger)
        }
    }

    private func writeMarks(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        var marks = StoredScopes()
        var keys: [ByteBuffer] = []
        for (scope, key) in result.marks {
            marks.append(scope)
            keys.append(key.stored)
        }
        guard !keys.isEmpty else { return }
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_deletion_marks (account_id, bundle_id, scope, value, key)
            SELECT \(account), b, s, v, key
            FROM unnest(\(marks.bundles)::text[], \(marks.scopes)::text[], \(marks.values)::text[], \(keys)::bytea[]) AS k(b, s, v, key)
            ON CONFLICT (account_id, bundle_id, scope, value) DO UPDATE SET key = excluded.key
            """, logger: logger)
    }

    private func writeShortcuts(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        var rows = (bundles: [String](), identifiers: [String](), latest: [Int64](), counts: [Int64]())
        for (shortcut, projection) in result.shortcuts.sorted(by: { $0.key < $1.key }) {
            rows.bundles.append(shortcut.bundleId); rows.identifiers.append(shortcut.identifier)
            // Version 0 holds no event: the shortcut left the view, its row becomes a tombstone.
            rows.latest.append(projection?.latestVersion ?? 0)
            rows.counts.append(Int64(projection?.donationCount ?? 0))
        }
        guard !rows.bundles.isEmpty else { return }
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_shortcuts (account_id, bundle_id, identifier, view, version)
            SELECT \(account), k.b, k.i,
                   e.body || jsonb_build_object('donationCount', k.n,
                                                'lastDonatedAt', jsonb_build_object('wallMillis', e.hlc_wall, 'counter', e.hlc_counter)),
                   \(result.version)
            FROM unnest(\(rows.bundles)::text[], \(rows.identifiers)::text[], \(rows.latest)::int8[], \(rows.counts)::int8[]) AS k(b, i, p, n)
            LEFT JOIN events e ON e.account_id = \(account) AND e.version = k.p
            ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET view = excluded.view, version = excluded.version
            """, logger: logger)
    }

    private func writeVoiceShortcuts(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        var rows = VoiceShortcutColumns()
        for change in result.voiceShortcuts {
            try rows.append(change, version: change.viewChanged ? result.version : 0)
        }
        guard !rows.ids.isEmpty else { return }
        let table = "\(tables.prefix)projection_voice_shortcuts"
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: table) (account_id, voice_shortcut_id, view, version, deleted, target_key, target_bundle_id,
                target_identifier, target_title, phrase_key, phrase, normalized_phrase, conflicts_with, target_available)
            SELECT \(account), id, nullif(view, '')::jsonb, v, deleted,
                   nullif(tk, ''::bytea), CASE WHEN tk <> ''::bytea THEN tb END, CASE WHEN tk <> ''::bytea THEN ti END,
                   CASE WHEN tk <> ''::bytea THEN tt END,
                   nullif(pk, ''::bytea), CASE WHEN pk <> ''::bytea THEN ph END, CASE WHEN pk <> ''::bytea THEN np END,
                   nullif(owner, '00000000-0000-0000-0000-000000000000'::uuid), available
            FROM unnest(\(rows.ids)::uuid[], \(rows.views)::text[], \(rows.versions)::int8[], \(rows.deleted)::bool[],
                        \(rows.targetKeys)::bytea[], \(rows.targetBundles)::text[], \(rows.targetIdentifiers)::text[], \(rows.targetTitles)::text[],
                        \(rows.phraseKeys)::bytea[], \(rows.phrases)::text[], \(rows.normalized)::text[], \(rows.owners)::uuid[], \(rows.available)::bool[])
                 AS k(id, view, v, deleted, tk, tb, ti, tt, pk, ph, np, owner, available)
            ON CONFLICT (account_id, voice_shortcut_id) DO UPDATE SET
                view = excluded.view,
                -- 0: the view did not change, and neither does the version it changed at.
                version = CASE WHEN excluded.version = 0 THEN \(unescaped: table).version ELSE excluded.version END,
                deleted = excluded.deleted, target_key = excluded.target_key, target_bundle_id = excluded.target_bundle_id,
                target_identifier = excluded.target_identifier, target_title = excluded.target_title, phrase_key = excluded.phrase_key,
                phrase = excluded.phrase, normalized_phrase = excluded.normalized_phrase, conflicts_with = excluded.conflicts_with,
                target_available = excluded.target_available
            """, logger: logger)
    }

    private func writeDevices(_ account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        var rows = (ids: [UUID](), installed: [String](), keys: [ByteBuffer](), raises: [Int64]())
        for (device, change) in result.devices.sorted(by: { $0.key.isOrderedBefore($1.key) }) {
            rows.ids.append(device)
            rows.installed.append(Self.arrayLiteral(change.reported.value.sorted()))
            rows.keys.append(change.reported.key.stored)
            rows.raises.append(change.appsChanged ? 1 : 0)
        }
        guard !rows.ids.isEmpty else { return }
        let table = "\(tables.prefix)projection_devices"
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: table) (account_id, device_id, installed, reported_key, apps_version)
            SELECT \(account), d, installed::text[], k, r
            FROM unnest(\(rows.ids)::uuid[], \(rows.installed)::text[], \(rows.keys)::bytea[], \(rows.raises)::int8[])
                 AS k(d, installed, k, r)
            ON CONFLICT (account_id, device_id) DO UPDATE SET
                installed = excluded.installed, reported_key = excluded.reported_key,
                apps_version = \(unescaped: table).apps_version + excluded.apps_version
            """, logger: logger)
    }

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
