import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// Writes back what a batch changed for each of its accounts, one statement per table.
    ///
    /// A projected shortcut is the event at its latest donation's position with its count and
    /// `lastDonatedAt` added: the fold decides which donation that is, the row copies its attributes.
    public func write(_ results: [UUID: AccountBatchResult], on connection: PostgresConnection) async throws {
        guard !results.isEmpty else { return }
        let ordered = results.sorted { $0.key.isOrderedBefore($1.key) }
        try await writeAccounts(ordered, on: connection)
        try await writeGroups(ordered, on: connection)
        try await writeMarks(ordered, on: connection)
        try await writeShortcuts(ordered, on: connection)
        try await writeVoiceShortcuts(ordered, on: connection)
        try await writeDevices(ordered, on: connection)
    }

    private func writeAccounts(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter)
            SELECT * FROM unnest(\(results.map(\.key))::uuid[], \(results.map(\.value.version))::int8[],
                                 \(results.map(\.value.maxHLC.wallMillis))::int8[], \(results.map { Int64($0.value.maxHLC.counter) })::int8[])
            ON CONFLICT (account_id) DO UPDATE SET
                version = excluded.version, max_hlc_wall = excluded.max_hlc_wall, max_hlc_counter = excluded.max_hlc_counter
            """, logger: logger)
    }

    private func writeGroups(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        var gone = (accounts: [UUID](), bundles: [String](), identifiers: [String](), groups: [String]())
        var kept = (accounts: [UUID](), bundles: [String](), identifiers: [String](), groups: [String](),
                    counts: [Int64](), latest: [ByteBuffer](), positions: [Int64](), covered: [ByteBuffer]())
        for (account, result) in results {
            for (id, row) in result.groups.sorted(by: { $0.key < $1.key }) {
                if let row {
                    kept.accounts.append(account); kept.bundles.append(id.shortcut.bundleId)
                    kept.identifiers.append(id.shortcut.identifier); kept.groups.append(id.group)
                    kept.counts.append(Int64(row.count)); kept.latest.append(row.latest.stored)
                    kept.positions.append(row.latestVersion); kept.covered.append(row.coveredBelow?.stored ?? ByteBuffer())
                } else {
                    gone.accounts.append(account); gone.bundles.append(id.shortcut.bundleId)
                    gone.identifiers.append(id.shortcut.identifier); gone.groups.append(id.group)
                }
            }
        }
        let table = "\(tables.prefix)projection_donation_groups"
        if !gone.accounts.isEmpty {
            try await connection.guardedQuery("""
                DELETE FROM \(unescaped: table) g
                USING unnest(\(gone.accounts)::uuid[], \(gone.bundles)::text[], \(gone.identifiers)::text[], \(gone.groups)::text[]) AS k(a, b, i, g)
                WHERE g.account_id = k.a AND g.bundle_id = k.b AND g.identifier = k.i AND g.group_id = k.g
                """, logger: logger)
        }
        if !kept.accounts.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: table) (account_id, bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below)
                SELECT a, b, i, g, n, l, p, nullif(c, ''::bytea)
                FROM unnest(\(kept.accounts)::uuid[], \(kept.bundles)::text[], \(kept.identifiers)::text[], \(kept.groups)::text[],
                            \(kept.counts)::int8[], \(kept.latest)::bytea[], \(kept.positions)::int8[], \(kept.covered)::bytea[])
                     AS k(a, b, i, g, n, l, p, c)
                ON CONFLICT (account_id, bundle_id, identifier, group_id) DO UPDATE SET
                    donations = excluded.donations, latest_key = excluded.latest_key,
                    latest_version = excluded.latest_version, covered_below = excluded.covered_below
                """, logger: logger)
        }
    }

    private func writeMarks(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        var marks = StoredScopes()
        var keys: [ByteBuffer] = []
        for (account, result) in results {
            for (scope, key) in result.marks {
                marks.append(account, scope)
                keys.append(key.stored)
            }
        }
        guard !keys.isEmpty else { return }
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_deletion_marks (account_id, bundle_id, scope, value, key)
            SELECT * FROM unnest(\(marks.accounts)::uuid[], \(marks.bundles)::text[], \(marks.scopes)::text[], \(marks.values)::text[], \(keys)::bytea[])
            ON CONFLICT (account_id, bundle_id, scope, value) DO UPDATE SET key = excluded.key
            """, logger: logger)
    }

    private func writeShortcuts(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        var rows = (accounts: [UUID](), bundles: [String](), identifiers: [String](), latest: [Int64](), counts: [Int64](), versions: [Int64]())
        for (account, result) in results {
            for (shortcut, projection) in result.shortcuts.sorted(by: { $0.key < $1.key }) {
                rows.accounts.append(account); rows.bundles.append(shortcut.bundleId); rows.identifiers.append(shortcut.identifier)
                // Version 0 holds no event: the shortcut left the view, its row becomes a tombstone.
                rows.latest.append(projection?.latestVersion ?? 0)
                rows.counts.append(Int64(projection?.donationCount ?? 0))
                rows.versions.append(result.version)
            }
        }
        guard !rows.accounts.isEmpty else { return }
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: tables.prefix)projection_shortcuts (account_id, bundle_id, identifier, view, version)
            SELECT k.a, k.b, k.i,
                   e.body || jsonb_build_object('donationCount', k.n,
                                                'lastDonatedAt', jsonb_build_object('wallMillis', e.hlc_wall, 'counter', e.hlc_counter)),
                   k.v
            FROM unnest(\(rows.accounts)::uuid[], \(rows.bundles)::text[], \(rows.identifiers)::text[], \(rows.latest)::int8[],
                        \(rows.counts)::int8[], \(rows.versions)::int8[]) AS k(a, b, i, p, n, v)
            LEFT JOIN events e ON e.account_id = k.a AND e.version = k.p
            ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET view = excluded.view, version = excluded.version
            """, logger: logger)
    }

    private func writeVoiceShortcuts(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        var rows = VoiceShortcutColumns()
        for (account, result) in results {
            for change in result.voiceShortcuts {
                try rows.append(account: account, change, version: change.viewChanged ? result.version : 0)
            }
        }
        guard !rows.accounts.isEmpty else { return }
        let table = "\(tables.prefix)projection_voice_shortcuts"
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: table) (account_id, voice_shortcut_id, view, version, deleted, target_key, target_bundle_id,
                target_identifier, target_title, phrase_key, phrase, normalized_phrase, conflicts_with, target_available)
            SELECT a, id, nullif(view, '')::jsonb, v, deleted,
                   nullif(tk, ''::bytea), CASE WHEN tk <> ''::bytea THEN tb END, CASE WHEN tk <> ''::bytea THEN ti END,
                   CASE WHEN tk <> ''::bytea THEN tt END,
                   nullif(pk, ''::bytea), CASE WHEN pk <> ''::bytea THEN ph END, CASE WHEN pk <> ''::bytea THEN np END,
                   nullif(owner, '00000000-0000-0000-0000-000000000000'::uuid), available
            FROM unnest(\(rows.accounts)::uuid[], \(rows.ids)::uuid[], \(rows.views)::text[], \(rows.versions)::int8[], \(rows.deleted)::bool[],
                        \(rows.targetKeys)::bytea[], \(rows.targetBundles)::text[], \(rows.targetIdentifiers)::text[], \(rows.targetTitles)::text[],
                        \(rows.phraseKeys)::bytea[], \(rows.phrases)::text[], \(rows.normalized)::text[], \(rows.owners)::uuid[], \(rows.available)::bool[])
                 AS k(a, id, view, v, deleted, tk, tb, ti, tt, pk, ph, np, owner, available)
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

    private func writeDevices(_ results: [(key: UUID, value: AccountBatchResult)], on connection: PostgresConnection) async throws {
        var rows = (accounts: [UUID](), ids: [UUID](), installed: [String](), keys: [ByteBuffer](), raises: [Int64]())
        for (account, result) in results {
            for (device, change) in result.devices.sorted(by: { $0.key.isOrderedBefore($1.key) }) {
                rows.accounts.append(account); rows.ids.append(device)
                rows.installed.append(Self.arrayLiteral(change.reported.value.sorted()))
                rows.keys.append(change.reported.key.stored)
                rows.raises.append(change.appsChanged ? 1 : 0)
            }
        }
        guard !rows.accounts.isEmpty else { return }
        let table = "\(tables.prefix)projection_devices"
        try await connection.guardedQuery("""
            INSERT INTO \(unescaped: table) (account_id, device_id, installed, reported_key, apps_version)
            SELECT a, d, installed::text[], k, r
            FROM unnest(\(rows.accounts)::uuid[], \(rows.ids)::uuid[], \(rows.installed)::text[], \(rows.keys)::bytea[], \(rows.raises)::int8[])
                 AS k(a, d, installed, k, r)
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

/// Voice shortcut rows as the column arrays of `unnest`; "" and empty bytes stand for NULL.
private struct VoiceShortcutColumns {
    var accounts: [UUID] = [], ids: [UUID] = [], views: [String] = [], versions: [Int64] = [], deleted: [Bool] = []
    var targetKeys: [ByteBuffer] = [], targetBundles: [String] = [], targetIdentifiers: [String] = [], targetTitles: [String] = []
    var phraseKeys: [ByteBuffer] = [], phrases: [String] = [], normalized: [String] = [], owners: [UUID] = [], available: [Bool] = []
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    mutating func append(account: UUID, _ change: VoiceShortcutChange, version: Int64) throws {
        let row = change.row
        accounts.append(account); ids.append(row.id)
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
