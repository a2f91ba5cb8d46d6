import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// What compacting one account did, or would do (`dryRun`).
public struct Compaction: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Compacted through `horizonVersion` (or, on a dry run, would be).
        case compacted
        /// Compacted through `horizonVersion` already; nothing older to compact.
        case nothingOlder
        /// Behind its head (an import, a parked account): the maintenance tasks fold it first.
        case behind
        /// No version at or below the one asked for is a clean cut (`AccountHorizon`): every
        /// such version has an event after it older than one before it.
        case noCleanCut
    }

    public var account: UUID
    public var outcome: Outcome
    public var dryRun: Bool
    /// The horizon after the compaction (the one before, when nothing was compacted); 0: none.
    public var horizonVersion: Int64 = 0
    /// The wall clock of the horizon's greatest key (milliseconds since 1970), when there is one.
    public var horizonWallMillis: Int64?
    /// Events removed from the log (or that would be).
    public var eventsRemoved = 0
    /// Their stored size, as PostgreSQL counts a row's columns.
    public var bytesRemoved: Int64 = 0
    /// Events at or below the horizon kept: the latest donation of a group, whose attributes a
    /// shortcut shows, and each device's last event, which gives its last seq.
    public var eventsKept = 0
}

/// The fold of the snapshot and the events after it did not give the account's live rows: a
/// defect. The compaction is rolled back and the account left as it was.
public struct CompactionMismatch: Error, CustomStringConvertible {
    public var account: UUID
    public var differences: Int
    public var description: String {
        "compacting account \(account.uuidString.lowercased()) would change \(differences) of its rows; nothing was compacted"
    }
}

extension ProjectionStore {
    /// Compacts `account` through the greatest version at or below `through` that is a clean cut
    /// (DESIGN §3, "Across the horizon"), in one transaction that holds the account's head and
    /// waits for no other account:
    ///
    /// 1. the snapshot (`snapshot.*`) becomes the fold of the last snapshot and the events up to
    ///    the horizon, every donation it counts compacted, with the horizon on its account row;
    /// 2. the fold of that snapshot and the events after it is checked against the live rows
    ///    (every column but the compacted parts), and their compacted parts written from it: the
    ///    views do not change, and a mismatch (`CompactionMismatch`) rolls everything back;
    /// 3. the events up to the horizon leave the log, each one's fingerprint kept first (what
    ///    recognises a device's retry of it, `RetryFingerprints`), but for those still read by
    ///    version (a group's latest donation, whose attributes its shortcut shows) and each
    ///    device's last event (its last seq, which a push reads in the log);
    /// 4. the head is written, so no server folds over rows it kept from before.
    ///
    /// `dryRun` does everything but commit, and says what it would have removed.
    public func compact(account: UUID, through: Int64, dryRun: Bool = false) async throws -> Compaction {
        try await client.withConnection { connection in
            var compaction = Compaction(account: account, outcome: .compacted, dryRun: dryRun)
            do {
                try await connection.inTransaction(logger: logger) { connection in
                    try await compact(&compaction, through: through, on: connection)
                    if dryRun { throw DryRun() }
                }
            } catch is DryRun {}
            return compaction
        }
    }

    /// The last version of `account` recorded before `date`: what `--before` compacts through (0: none).
    public func lastVersion(of account: UUID, recordedBefore date: Date) async throws -> Int64 {
        try await client.withConnection { try await lastVersion(of: account, recordedBefore: date, on: $0) }
    }

    func lastVersion(of account: UUID, recordedBefore date: Date, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.guardedQuery("""
            SELECT coalesce(max(version), 0) FROM events WHERE account_id = \(account) AND recorded_at < \(date)
            """, logger: logger)
        return try await rows.decode(Int64.self).collectAll().first ?? 0
    }

    private struct DryRun: Error {}

    /// `compact(account:through:dryRun:)` in the caller's transaction, which may hold the head
    /// already (the maintenance tasks' `compactNextDue` takes it with SKIP LOCKED first).
    func compact(_ compaction: inout Compaction, through requested: Int64, on connection: PostgresConnection) async throws {
        let account = compaction.account
        let heads = try await connection.guardedQuery("""
            SELECT h.version, h.folded_version, a.horizon,
                   EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = \(account))
            FROM account_heads h LEFT JOIN projection_accounts a ON a.account_id = h.account_id
            WHERE h.account_id = \(account) FOR UPDATE OF h
            """, logger: logger)
        guard let (version, folded, storedHorizon, parked) = try await heads.decode((Int64, Int64, ByteBuffer?, Bool).self).collectAll().first
        else { throw AppendError.accountUnknown }
        let before = try storedHorizon.map(CompactionColumns.horizon(stored:))
        compaction.horizonVersion = before?.version ?? 0
        compaction.horizonWallMillis = before?.key.hlc.wallMillis
        guard folded == version, !parked else {
            compaction.outcome = .behind
            return
        }
        let after = before?.version ?? 0
        guard min(requested, version) > after else {
            compaction.outcome = .nothingOlder
            return
        }
        let log = try await FoldLogCoding().entries(try await connection.guardedQuery("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE account_id = \(account) AND version > \(after) ORDER BY version
            """, logger: logger)).map(\.event)
        guard let cut = Self.cleanCut(log, atMost: requested) else {
            compaction.outcome = .noCleanCut
            return
        }
        let horizon = AccountHorizon(version: log[cut].version, key: log[...cut].map(\.key).max()!)
        compaction.horizonVersion = horizon.version
        compaction.horizonWallMillis = horizon.key.hlc.wallMillis

        // 1. The snapshot at the horizon.
        let snapshot = ProjectionRowStore(tables: .snapshot, logger: logger)
        try await snapshot.fold(account: account, batch: AccountBatch(events: Array(log[...cut]), foldedVersion: after), on: connection)
        try await connection.guardedQuery("""
            UPDATE snapshot.projection_donation_groups SET compacted = int8send(donations) || coalesce(habits, ''::bytea)
            WHERE account_id = \(account)
            """, logger: logger)
        try await connection.guardedQuery("""
            UPDATE snapshot.projection_accounts SET horizon = \(CompactionColumns.stored(horizon)) WHERE account_id = \(account)
            """, logger: logger)

        // 2. The live rows, checked against the snapshot and the rest, and their compacted parts.
        let rest = Array(log[(cut + 1)...])
        let needs = FoldNeeds(events: rest)
        let stored = try await snapshot.read(account: account, needs: needs, on: connection)
        let result = try await snapshot.fold(account: account, batch: AccountBatch(events: rest, foldedVersion: horizon.version),
                                             needs: needs, stored: stored, on: connection)
        // Every group as the snapshot has it, or as the fold of the rest left it.
        var expected = try await groups(of: account, in: .snapshot, on: connection)
        for (id, row) in result.groups { expected[id] = row }
        let live = try await groups(of: account, in: .live, on: connection)
        let differences = Set(expected.keys).union(live.keys).count { expected[$0]?.uncompacted != live[$0]?.uncompacted }
        guard differences == 0 else { throw CompactionMismatch(account: account, differences: differences) }
        let held = live.keys.sorted()
        try await connection.guardedQuery("""
            UPDATE projection_donation_groups l SET compacted = nullif(f.compacted, ''::bytea)
            FROM unnest(\(held.map(\.shortcut.bundleId))::text[], \(held.map(\.shortcut.identifier))::text[], \(held.map(\.group))::text[],
                        \(held.map { expected[$0].flatMap(CompactionColumns.stored(compactedOf:)) ?? ByteBuffer() })::bytea[])
                 AS f(bundle_id, identifier, group_id, compacted)
            WHERE l.account_id = \(account) AND f.bundle_id = l.bundle_id AND f.identifier = l.identifier AND f.group_id = l.group_id
            """, logger: logger)
        try await connection.guardedQuery("""
            UPDATE projection_accounts SET horizon = \(CompactionColumns.stored(horizon)) WHERE account_id = \(account)
            """, logger: logger)

        // 3. The log up to the horizon, but for what is still read of it, each event's
        // fingerprint kept first: what recognises a device's retry of it (migration 0029).
        try await keepRetryFingerprints(account: account, after: after, through: horizon.version, on: connection)
        try await connection.guardedQuery("SET LOCAL shortcut_sync.compaction = 'on'", logger: logger)
        // Those kept are marked, the others measured and removed, in one statement: nothing of them
        // comes back here (Citus refuses a function such as pg_column_size in a RETURNING).
        let removed = try await connection.guardedQuery("""
            WITH below AS (
                SELECT e.version, pg_column_size(e.*) AS size, e.version IN (
                    SELECT latest_version FROM projection_donation_groups WHERE account_id = \(account)
                    UNION SELECT latest_version FROM snapshot.projection_donation_groups WHERE account_id = \(account)
                    UNION (SELECT DISTINCT ON (device_id) version FROM events
                           WHERE account_id = \(account) ORDER BY device_id, seq DESC)) AS kept
                FROM events e WHERE e.account_id = \(account) AND e.version <= \(horizon.version)),
            gone AS (
                DELETE FROM events e USING below b
                WHERE e.account_id = \(account) AND e.version = b.version AND NOT b.kept)
            SELECT count(*) FILTER (WHERE NOT kept), count(*) FILTER (WHERE kept), coalesce(sum(size) FILTER (WHERE NOT kept), 0)::int8
            FROM below
            """, logger: logger)
        for try await (gone, kept, bytes) in removed.decode((Int64, Int64, Int64).self) {
            compaction.eventsRemoved = Int(gone)
            compaction.eventsKept = Int(kept)
            compaction.bytesRemoved = bytes
        }

        // 4. The head: what a server kept of the account's rows is of no use past this. It counts
        // the compaction and what it removed (migration 0026, `admin projections status`).
        try await connection.guardedQuery("""
            UPDATE account_heads SET folded_version = folded_version, compactions = compactions + 1,
                   compacted_events = compacted_events + \(Int64(compaction.eventsRemoved)),
                   compacted_bytes = compacted_bytes + \(compaction.bytesRemoved)
            WHERE account_id = \(account)
            """, logger: logger)
    }

    /// The greatest index of `log` (an account's events in version order, past its last horizon)
    /// whose version is at most `limit` and after which every event is later, by key, than every
    /// event up to it; nil when there is none.
    static func cleanCut(_ log: [FoldEvent], atMost limit: Int64) -> Int? {
        guard !log.isEmpty else { return nil }
        var laterMin = [EventKey?](repeating: nil, count: log.count + 1)
        for index in log.indices.reversed() { laterMin[index] = laterMin[index + 1].map { min($0, log[index].key) } ?? log[index].key }
        var best: Int?
        var earlierMax: EventKey?
        for index in log.indices where log[index].version <= limit {
            earlierMax = earlierMax.map { max($0, log[index].key) } ?? log[index].key
            if let next = laterMin[index + 1], next < earlierMax! { continue }
            best = index
        }
        return best
    }

    /// The account's donation groups in `tables`, whole.
    private func groups(of account: UUID, in tables: ProjectionTables, on connection: PostgresConnection) async throws
        -> [DonationGroupID: DonationGroupRow] {
        let rows = try await connection.guardedQuery("""
            SELECT bundle_id, identifier, group_id, donations, latest_key, latest_version, covered_below, habits, compacted
            FROM \(unescaped: tables.prefix)projection_donation_groups WHERE account_id = \(account)
            """, logger: logger)
        var groups: [DonationGroupID: DonationGroupRow] = [:]
        for try await (bundleId, identifier, group, count, latest, version, covered, habits, compacted)
            in rows.decode((String, String, String, Int64, ByteBuffer, Int64, ByteBuffer?, ByteBuffer?, ByteBuffer?).self) {
            let id = DonationGroupID(shortcut: ShortcutID(bundleId: bundleId, identifier: identifier), group: group)
            var row = DonationGroupRow(id: id, count: Int(try StoredCount.checked(count, "donations", atLeast: 1)), latest: try EventKey(stored: latest),
                                       latestVersion: try StoredCount.checked(version, "latest_version", atLeast: 1),
                                       coveredBelow: try covered.map(EventKey.init(stored:)),
                                       habits: try habits.map(ShortcutHabits.init(stored:)) ?? ShortcutHabits())
            if let compacted { try CompactionColumns.read(compacted: compacted, into: &row) }
            groups[id] = row
        }
        return groups
    }
}
