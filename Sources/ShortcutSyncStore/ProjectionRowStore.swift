import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The rows of the per-item fold in one set of projection tables (DESIGN §6): reads exactly the
/// rows an account's batch needs, one statement per table, and writes back what the batch
/// changed, one statement per table; every one of these statements names that one account
/// (`account_id = $n`), so that on Citus each is routed to the account's shard (§9). The fold
/// itself is the domain's.
public struct ProjectionRowStore: Sendable {
    public let tables: ProjectionTables
    public let logger: Logger

    public init(tables: ProjectionTables, logger: Logger) {
        self.tables = tables
        self.logger = logger
    }

    /// Tells every server instance, when the transaction commits, which accounts' views changed
    /// (coalesced: as few notifications as the payload limit allows).
    public func notify(_ notification: ProjectionNotification, on connection: PostgresConnection) async throws {
        let payloads = ProjectionNotification.payloads(sender: notification.sender, versions: notification.versions)
        guard !payloads.isEmpty else { return }
        try await connection.guardedQuery(
            "SELECT pg_notify(\(ProjectionNotification.channel), payload) FROM unnest(\(payloads)::text[]) AS payload",
            logger: logger).drain()
    }

    /// Empties the tables (for a rebuild).
    public func reset(_ client: PostgresClient) async throws {
        let names = ProjectionTables.names.map { tables.prefix + $0 }.joined(separator: ", ")
        try await client.query("TRUNCATE \(unescaped: names)", logger: logger)
    }

    // MARK: Reading what a batch needs

    /// The stored rows of `account` that its batch needs (empty rows when it has none stored):
    /// one statement per table, each naming the account (DESIGN §6), so that on a distributed
    /// database each is answered by the account's shard alone.
    public func read(account: UUID, needs: FoldNeeds, on connection: PostgresConnection) async throws -> AccountFoldRows {
        var rows = AccountFoldRows()
        try await readAccount(account, into: &rows, on: connection)
        try await readGroups(account, needs, into: &rows, on: connection)
        try await readMarks(account, needs, into: &rows, on: connection)
        try await readVoiceShortcuts(account, needs, into: &rows, on: connection)
        try await readDevices(account, needs, into: &rows, on: connection)
        return rows
    }

    private func readAccount(_ account: UUID, into rows: inout AccountFoldRows, on connection: PostgresConnection) async throws {
        let result = try await connection.guardedQuery("""
            SELECT version, max_hlc_wall, max_hlc_counter FROM \(unescaped: tables.prefix)projection_accounts
            WHERE account_id = \(account)
            """, logger: logger)
        for try await (version, wall, counter) in result.decode((Int64, Int64?, Int64?).self) {
            rows.version = version
            rows.maxHLC = HLCTimestamp(wallMillis: wall ?? 0, counter: Int(counter ?? 0))
        }
    }

    private func readGroups(_ account: UUID, _ needs: FoldNeeds, into rows: inout AccountFoldRows, on connection: PostgresConnection) async throws {
        var shortcuts = (bundles: [String](), identifiers: [String]())
        for shortcut in needs.shortcuts { shortcuts.bundles.append(shortcut.bundleId); shortcuts.identifiers.append(shortcut.identifier) }
        var groups = (bundles: [String](), groups: [String]())
        for group in needs.shortcutsInGroups { groups.bundles.append(group.bundleId); groups.groups.append(group.group) }
        let bundles = Array(needs.bundles)
        guard !shortcuts.bundles.isEmpty || !groups.bundles.isEmpty || !bundles.isEmpty else { return }
        let table = "\(tables.prefix)projection_donation_groups"
        // Every reference to the table names the account; the unnest arrays carry the rest of the keys.
        let result = try await connection.guardedQuery("""
            WITH wanted AS (
                SELECT k.b, k.i FROM unnest(\(shortcuts.bundles)::text[], \(shortcuts.identifiers)::text[]) AS k(b, i)
                UNION
                SELECT h.bundle_id, h.identifier
                FROM unnest(\(groups.bundles)::text[], \(groups.groups)::text[]) AS k(b, g)
                JOIN \(unescaped: table) h ON h.account_id = \(account) AND h.bundle_id = k.b AND h.group_id = k.g
                UNION
                SELECT h.bundle_id, h.identifier
                FROM unnest(\(bundles)::text[]) AS k(b)
                JOIN \(unescaped: table) h ON h.account_id = \(account) AND h.bundle_id = k.b
            )
            SELECT g.bundle_id, g.identifier, g.group_id, g.donations, g.latest_key, g.latest_version, g.covered_below
            FROM wanted w JOIN \(unescaped: table) g ON g.account_id = \(account) AND g.bundle_id = w.b AND g.identifier = w.i
            """, logger: logger)
        for try await row in result {
            var cells = CellReader(row)
            let shortcut = ShortcutID(bundleId: try cells.next(String.self), identifier: try cells.next(String.self))
            let id = DonationGroupID(shortcut: shortcut, group: try cells.next(String.self))
            let count = try cells.next(Int64.self), latest = try EventKey(stored: try cells.next(ByteBuffer.self))
            let position = try cells.next(Int64.self), covered = try cells.next(ByteBuffer?.self).map(EventKey.init(stored:))
            rows.groups[id] = DonationGroupRow(id: id, count: Int(count), latest: latest, latestVersion: position, coveredBelow: covered)
        }
    }

    private func readMarks(_ account: UUID, _ needs: FoldNeeds, into rows: inout AccountFoldRows, on connection: PostgresConnection) async throws {
        var marks = StoredScopes()
        for scope in needs.marks { marks.append(scope) }
        guard !marks.bundles.isEmpty else { return }
        let result = try await connection.guardedQuery("""
            SELECT m.bundle_id, m.scope, m.value, m.key
            FROM unnest(\(marks.bundles)::text[], \(marks.scopes)::text[], \(marks.values)::text[]) AS k(b, s, v)
            JOIN \(unescaped: tables.prefix)projection_deletion_marks m
              ON m.account_id = \(account) AND m.bundle_id = k.b AND m.scope = k.s AND m.value = k.v
            """, logger: logger)
        for try await row in result {
            var cells = CellReader(row)
            let scope = try StoredScopes.scope(bundleId: try cells.next(String.self), scope: try cells.next(String.self), value: try cells.next(String.self))
            rows.marks[scope] = try EventKey(stored: try cells.next(ByteBuffer.self))
        }
    }

    private func readVoiceShortcuts(
        _ account: UUID, _ needs: FoldNeeds, into rows: inout AccountFoldRows, on connection: PostgresConnection
    ) async throws {
        let ids = Array(needs.voiceShortcuts), phrases = Array(needs.phrases)
        var targets = (bundles: [String](), identifiers: [String]())
        for shortcut in needs.shortcuts { targets.bundles.append(shortcut.bundleId); targets.identifiers.append(shortcut.identifier) }
        let bundles = Array(needs.voiceTargetBundles)
        guard !ids.isEmpty || !phrases.isEmpty || !targets.bundles.isEmpty || !bundles.isEmpty else { return }
        let table = "\(tables.prefix)projection_voice_shortcuts"
        let result = try await connection.guardedQuery("""
            WITH ids AS (SELECT * FROM unnest(\(ids)::uuid[]) AS k(id)),
            phrases AS (
                SELECT * FROM unnest(\(phrases)::text[]) AS k(p)
                UNION
                SELECT w.normalized_phrase FROM ids JOIN \(unescaped: table) w ON w.account_id = \(account) AND w.voice_shortcut_id = ids.id
                WHERE w.normalized_phrase IS NOT NULL
            ),
            wanted AS (
                SELECT id FROM ids
                UNION
                SELECT v.voice_shortcut_id FROM phrases JOIN \(unescaped: table) v
                  ON v.account_id = \(account) AND v.normalized_phrase = phrases.p
                UNION
                SELECT v.voice_shortcut_id
                FROM unnest(\(targets.bundles)::text[], \(targets.identifiers)::text[]) AS k(b, i)
                JOIN \(unescaped: table) v ON v.account_id = \(account) AND v.target_bundle_id = k.b AND v.target_identifier = k.i
                UNION
                SELECT v.voice_shortcut_id FROM unnest(\(bundles)::text[]) AS k(b)
                JOIN \(unescaped: table) v ON v.account_id = \(account) AND v.target_bundle_id = k.b
            )
            SELECT v.voice_shortcut_id, v.deleted, v.target_key, v.target_bundle_id, v.target_identifier, v.target_title,
                   v.phrase_key, v.phrase, v.normalized_phrase, v.conflicts_with, v.target_available
            FROM wanted w JOIN \(unescaped: table) v ON v.account_id = \(account) AND v.voice_shortcut_id = w.id
            """, logger: logger)
        for try await row in result.decode(
            (UUID, Bool, ByteBuffer?, String?, String?, String?, ByteBuffer?, String?, String?, UUID?, Bool).self
        ) {
            let (id, deleted, targetKey, targetBundle, targetIdentifier, targetTitle, phraseKey, phrase, normalized, owner, available) = row
            var voice = VoiceShortcutRow(id: id, deleted: deleted, normalizedPhrase: normalized, conflictsWith: owner, targetAvailable: available)
            if let targetKey, let targetBundle, let targetIdentifier, let targetTitle {
                voice.target = Stamped(key: try EventKey(stored: targetKey),
                                       value: VoiceShortcutTarget(bundleId: targetBundle, identifier: targetIdentifier, title: targetTitle))
            }
            if let phraseKey, let phrase {
                voice.phrase = Stamped(key: try EventKey(stored: phraseKey), value: phrase)
            }
            rows.voiceShortcuts[id] = voice
        }
    }

    private func readDevices(_ account: UUID, _ needs: FoldNeeds, into rows: inout AccountFoldRows, on connection: PostgresConnection) async throws {
        let devices = Array(needs.devices)
        guard !devices.isEmpty else { return }
        let result = try await connection.guardedQuery("""
            SELECT d.device_id, d.installed, d.reported_key
            FROM unnest(\(devices)::uuid[]) AS k(d)
            JOIN \(unescaped: tables.prefix)projection_devices d ON d.account_id = \(account) AND d.device_id = k.d
            """, logger: logger)
        for try await (device, installed, key) in result.decode((UUID, [String], ByteBuffer).self) {
            rows.devices[device] = Stamped(key: try EventKey(stored: key), value: Set(installed))
        }
    }

    // MARK: Folding

    /// Folds one account's batch into these tables, in the caller's transaction on `connection`,
    /// which must hold the account's head (or, for the rebuild tables, know that nothing else
    /// writes the account's rows): reads the rows the batch touches (one statement per table),
    /// folds its events with the domain's `AccountBatchFold`, asks the account's log what late
    /// deletions cover, and writes back what changed (one statement per table). Every statement
    /// names the account alone (DESIGN §6, §9).
    @discardableResult
    public func fold(account: UUID, batch: AccountBatch, on connection: PostgresConnection) async throws -> AccountBatchResult {
        let needs = FoldNeeds(events: batch.events)
        let stored = try await read(account: account, needs: needs, on: connection)
        var fold = AccountBatchFold(before: stored, normalizedPhrases: needs.normalizedPhrases)
        for event in batch.events { fold.apply(event) }
        let covered = try await countCovered(account: account, foldedVersion: batch.foldedVersion, fold.recounts, on: connection)
        let result = try fold.finish(covered: covered)
        try await write(account: account, result, on: connection)
        return result
    }

    // MARK: Counting covered donations

    /// For each recount, how many donations of its group with keys in its range the account's
    /// log holds up to `foldedVersion` (those folded before the batch). One statement, naming
    /// the account.
    public func countCovered(
        account: UUID, foldedVersion: Int64, _ recounts: [AccountBatchFold.Recount], on connection: PostgresConnection
    ) async throws -> [DonationGroupID: Int] {
        guard !recounts.isEmpty else { return [:] }
        let lowest = EventKey(hlc: HLCTimestamp(wallMillis: .min, counter: Int(Int64.min)), deviceId: UUID.zero, seq: .min)
        let froms = recounts.map { $0.from ?? lowest }, tos = recounts.map(\.to)
        let result = try await connection.guardedQuery("""
            SELECT r.n, (
                SELECT count(*) FROM events e
                WHERE e.account_id = \(account) AND e.type = 'donation'
                  AND (e.body->>'bundleId') = r.b AND (e.body->>'identifier') = r.i
                  AND e.hlc_wall BETWEEN r.fw AND r.tw
                  AND coalesce(e.body->>'groupIdentifier', '') = r.g
                  AND (e.hlc_wall, e.hlc_counter, e.device_id, e.seq) >= (r.fw, r.fc, r.fd, r.fs)
                  AND (e.hlc_wall, e.hlc_counter, e.device_id, e.seq) < (r.tw, r.tc, r.td, r.ts)
                  AND e.version <= \(foldedVersion))
            FROM unnest(\(recounts.map(\.group.shortcut.bundleId))::text[],
                        \(recounts.map(\.group.shortcut.identifier))::text[], \(recounts.map(\.group.group))::text[],
                        \(froms.map(\.hlc.wallMillis))::int8[], \(froms.map { Int64($0.hlc.counter) })::int8[],
                        \(froms.map(\.deviceId))::uuid[], \(froms.map(\.seq))::int8[],
                        \(tos.map(\.hlc.wallMillis))::int8[], \(tos.map { Int64($0.hlc.counter) })::int8[],
                        \(tos.map(\.deviceId))::uuid[], \(tos.map(\.seq))::int8[])
                 WITH ORDINALITY AS r(b, i, g, fw, fc, fd, fs, tw, tc, td, ts, n)
            """, logger: logger)
        var counts: [DonationGroupID: Int] = [:]
        for try await (ordinal, count) in result.decode((Int64, Int64).self) {
            counts[recounts[Int(ordinal) - 1].group] = Int(count)
        }
        return counts
    }
}

/// One account's events to fold, all of them above `foldedVersion`, the version its rows include.
public struct AccountBatch: Sendable, Hashable {
    public var events: [FoldEvent]
    public var foldedVersion: Int64

    public init(events: [FoldEvent], foldedVersion: Int64) {
        self.events = events
        self.foldedVersion = foldedVersion
    }
}

/// One account's deletion scopes as the columns of `projection_deletion_marks` (its account
/// is a statement's parameter of its own).
struct StoredScopes {
    var bundles: [String] = [], scopes: [String] = [], values: [String] = []

    mutating func append(_ scope: DeletionScope) {
        let (kind, value) = Self.columns(of: scope)
        bundles.append(scope.bundleId)
        scopes.append(kind)
        values.append(value)
    }

    /// The `scope` and `value` columns of a mark.
    static func columns(of scope: DeletionScope) -> (scope: String, value: String) {
        switch scope {
        case .all: ("all", "")
        case .identifier(let shortcut): ("identifier", shortcut.identifier)
        case .group(_, let group): ("group", group)
        }
    }

    static func scope(bundleId: String, scope: String, value: String) throws -> DeletionScope {
        switch scope {
        case "all": return .all(bundleId: bundleId)
        case "identifier": return .identifier(ShortcutID(bundleId: bundleId, identifier: value))
        case "group": return .group(bundleId: bundleId, group: value)
        default: throw StoreError.corruptRow("unknown deletion scope \(scope)")
        }
    }
}

extension EventKey {
    /// The key as its stored column (`sortableBytes`).
    var stored: ByteBuffer { ByteBuffer(bytes: sortableBytes) }

    init(stored buffer: ByteBuffer) throws {
        guard let key = EventKey(sortableBytes: buffer.readableBytesView) else {
            throw StoreError.corruptRow("a stored event key has \(buffer.readableBytes) bytes, not \(EventKey.sortableByteCount)")
        }
        self = key
    }
}

extension PostgresRowSequence {
    /// Reads and drops every row, so the statement has surely run to its end.
    func drain() async throws {
        for try await _ in self {}
    }
}
