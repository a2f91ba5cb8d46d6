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
        /// Another compaction of the account moved its horizon while this one folded its
        /// snapshot (its first step, which holds no head): this one compacted nothing.
        case overtaken
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
    /// How long the compaction held the account's head, which its pushes wait for: its second
    /// step, from the lock to just before the commit (zero when it compacted nothing).
    public var headHeld: Duration = .zero
}

/// The fold of the snapshot and the events after it did not give the account's live rows (in
/// any table the snapshot holds): a defect. The compaction is rolled back and the account left
/// as it was.
public struct CompactionMismatch: Error, CustomStringConvertible {
    public var account: UUID
    /// How many rows differ (at most 100 are counted).
    public var differences: Int
    /// The first of them, as `admin verify` names one.
    public var first: ProjectionDifference?
    public var description: String {
        "compacting account \(account.uuidString.lowercased()) would change \(differences) of its rows"
            + (first.map { " (first: \($0.kind) \($0.key))" } ?? "") + "; nothing was compacted"
    }
}

extension ProjectionStore {
    /// Compacts `account` through the greatest version at or below `through` that is a clean cut
    /// (DESIGN §3, "Across the horizon"), in one transaction that holds the account's head and
    /// waits for no other account:
    ///
    /// 1. the snapshot (`snapshot.*`) becomes the fold of the last snapshot and the events up to
    ///    the horizon, every donation it counts compacted, with the horizon on its account row;
    /// 2. the fold of that snapshot and the events after it is checked against the live rows,
    ///    every table as `admin verify` compares a rebuild's, and the groups' compacted parts
    ///    written from it: the views do not change, and a mismatch (`CompactionMismatch`) rolls
    ///    everything back;
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

    /// The greatest version of `account` up to which every event was recorded before `date`: what
    /// `--before` and the retention compact through (0: none). Not the last version recorded
    /// before it: an imported event keeps the time its file gives (issue 65, item 10), and one of
    /// long ago appended after this week's would put the cut among this week's events.
    public func lastVersion(of account: UUID, recordedBefore date: Date) async throws -> Int64 {
        try await client.withConnection { try await lastVersion(of: account, recordedBefore: date, on: $0) }
    }

    func lastVersion(of account: UUID, recordedBefore date: Date, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.guardedQuery("""
            SELECT CASE WHEN bool_or(recorded_at >= \(date)) THEN min(version) FILTER (WHERE recorded_at >= \(date)) - 1
                        ELSE coalesce(max(version), 0) END
            FROM events WHERE account_id = \(account)
            """, logger: logger)
        return try await rows.decode(Int64.self).collectAll().first ?? 0
    }

    private struct DryRun: Error {}

    /// `compact(account:through:dryRun:)` in the caller's transaction, in two steps, so that the
    /// account's pushes wait only for the second (issue 65, item 1):
    ///
    /// - **Without the head**, which it only shares (`FOR KEY SHARE`: an erasure waits, a push does
    ///   not): the clean cut, the snapshot at the horizon (step 1 of `compact(account:)`), every
    ///   retry fingerprint and the log up to the horizon removed (step 3). Nothing a push reads or
    ///   writes is written: what it reads of the log stays as it was until the commit.
    /// - **Holding the head** (`FOR NO KEY UPDATE`): whatever was pushed meanwhile, which must all
    ///   come after the cut by key (else `noCleanCut`, nothing done); the sign-outs behind the
    ///   horizon; the check of the snapshot and the rest against the live rows (step 2); the live
    ///   horizon and the head (step 4). What it folds is what came after the horizon, the history
    ///   kept whole, not the history compacted.
    ///
    /// Another compaction of the account that moved its horizon meanwhile (`overtaken`), or an
    /// import or a parking (`behind`), undoes the first step.
    func compact(_ compaction: inout Compaction, through requested: Int64, on connection: PostgresConnection) async throws {
        let account = compaction.account
        let shared = try await head(of: account, lock: "FOR KEY SHARE OF h", on: connection)
        let before = shared.horizon
        compaction.horizonVersion = before?.version ?? 0
        compaction.horizonWallMillis = before?.key.hlc.wallMillis
        guard shared.folded == shared.version, !shared.parked else {
            compaction.outcome = .behind
            return
        }
        let after = before?.version ?? 0
        guard min(requested, shared.version) > after else {
            compaction.outcome = .nothingOlder
            return
        }
        guard let horizon = try await cleanCut(of: account, after: after, atMost: requested, on: connection) else {
            compaction.outcome = .noCleanCut
            return
        }

        try await connection.guardedQuery("SAVEPOINT compaction_unheld", logger: logger)
        // 1. The snapshot at the horizon: the events up to it folded over the last one, a chunk
        // at a time (at most `compactionChunk` events in memory, whatever the history), each
        // chunk's fingerprints kept on the way (step 3 removes the events).
        let snapshot = ProjectionRowStore(tables: .snapshot, logger: logger)
        try await keepRetryFingerprints(account: account, keptBelow: after, on: connection)
        try await inChunks(of: account, after: after, through: horizon.version, on: connection) { chunk, before in
            try await snapshot.fold(account: account, batch: AccountBatch(events: chunk, foldedVersion: before), on: connection)
            try await keepRetryFingerprints(account: account, after: before, through: chunk.last!.version, on: connection)
        }
        try await connection.guardedQuery("""
            UPDATE snapshot.projection_donation_groups SET compacted = int8send(donations) || coalesce(habits, ''::bytea)
            WHERE account_id = \(account)
            """, logger: logger)
        try await connection.guardedQuery("""
            UPDATE snapshot.projection_accounts SET horizon = \(CompactionColumns.stored(horizon)) WHERE account_id = \(account)
            """, logger: logger)
        try await removeLog(account: account, through: horizon.version, into: &compaction, on: connection)

        // The head, held from here to the commit.
        let heldSince = ContinuousClock.now
        let held = try await head(of: account, lock: "FOR NO KEY UPDATE OF h", on: connection)
        let outcome: Compaction.Outcome? =
            held.horizon?.version != before?.version ? .overtaken
            : held.folded != held.version || held.parked ? .behind
            : try await pushedBefore(horizon, of: account, after: shared.version, on: connection) ? .noCleanCut
            : nil
        if let outcome {
            try await connection.guardedQuery("ROLLBACK TO SAVEPOINT compaction_unheld", logger: logger)
            compaction.outcome = outcome
            (compaction.eventsRemoved, compaction.eventsKept, compaction.bytesRemoved) = (0, 0, 0)
            return
        }
        compaction.horizonVersion = horizon.version
        compaction.horizonWallMillis = horizon.key.hlc.wallMillis

        // The devices signed out before the horizon with nothing after it leave the rules, in the
        // snapshot and the live row alike (the check below compares them).
        try await forgetSignOutsBehind(horizon.version, of: account, on: connection)

        // 2. The live rows, checked against the snapshot and the rest, and their compacted parts.
        let expected = try await foldOfTheRest(account: account, horizon: horizon.version, head: held.version, on: connection)
        let live = try await groups(of: account, in: .live, on: connection)
        let kept = live.keys.sorted()
        try await connection.guardedQuery("""
            UPDATE projection_donation_groups l SET compacted = nullif(f.compacted, ''::bytea)
            FROM unnest(\(kept.map(\.shortcut.bundleId))::text[], \(kept.map(\.shortcut.identifier))::text[], \(kept.map(\.group))::text[],
                        \(kept.map { expected[$0].flatMap(CompactionColumns.stored(compactedOf:)) ?? ByteBuffer() })::bytea[])
                 AS f(bundle_id, identifier, group_id, compacted)
            WHERE l.account_id = \(account) AND f.bundle_id = l.bundle_id AND f.identifier = l.identifier AND f.group_id = l.group_id
            """, logger: logger)
        try await connection.guardedQuery("""
            UPDATE projection_accounts SET horizon = \(CompactionColumns.stored(horizon)) WHERE account_id = \(account)
            """, logger: logger)

        // 4. The head: what a server kept of the account's rows is of no use past this. It counts
        // the compaction and what it removed (migration 0026, `admin projections status`).
        try await connection.guardedQuery("""
            UPDATE account_heads SET folded_version = folded_version, compactions = compactions + 1,
                   compacted_events = compacted_events + \(Int64(compaction.eventsRemoved)),
                   compacted_bytes = compacted_bytes + \(compaction.bytesRemoved)
            WHERE account_id = \(account)
            """, logger: logger)
        compaction.headHeld = ContinuousClock.now - heldSince
    }

    /// The account's head, its horizon and whether it is parked, locked as `lock` says.
    private func head(of account: UUID, lock: StaticString, on connection: PostgresConnection) async throws
        -> (version: Int64, folded: Int64, horizon: AccountHorizon?, parked: Bool) {
        let heads = try await connection.guardedQuery("""
            SELECT h.version, h.folded_version, a.horizon,
                   EXISTS (SELECT 1 FROM projection_parked_accounts p WHERE p.account_id = \(account))
            FROM account_heads h LEFT JOIN projection_accounts a ON a.account_id = h.account_id
            WHERE h.account_id = \(account) \(unescaped: lock.description)
            """, logger: logger)
        guard let (version, folded, horizon, parked) = try await heads.decode((Int64, Int64, ByteBuffer?, Bool).self).collectAll().first
        else { throw AppendError.accountUnknown }
        return (version, folded, try horizon.map(CompactionColumns.horizon(stored:)), parked)
    }

    /// Whether an event appended past `version` (while the first step ran) is not later, by key,
    /// than the horizon's greatest: then the horizon is no longer a clean cut.
    private func pushedBefore(_ horizon: AccountHorizon, of account: UUID, after version: Int64, on connection: PostgresConnection) async throws -> Bool {
        let key = horizon.key
        let rows = try await connection.guardedQuery("""
            SELECT EXISTS (SELECT 1 FROM events WHERE account_id = \(account) AND version > \(version)
                             AND (hlc_wall, hlc_counter, device_id, seq) <= (\(key.hlc.wallMillis), \(Int64(key.hlc.counter)), \(key.deviceId), \(key.seq)))
            """, logger: logger)
        return try await rows.decode(Bool.self).collectAll().first ?? false
    }

    /// Step 3: the log up to the horizon, but for what is still read of it (each event's
    /// fingerprint, what recognises a device's retry of it, is kept in step 1): a group's latest
    /// donation, live or in the snapshot, and each device's last event. A push meanwhile can only
    /// make one of those kept unneeded (a later donation, a later event), which the next
    /// compaction removes.
    private func removeLog(account: UUID, through horizon: Int64, into compaction: inout Compaction, on connection: PostgresConnection) async throws {
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
                FROM events e WHERE e.account_id = \(account) AND e.version <= \(horizon)),
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
    }

    /// The greatest version of `account` at most `limit` and past `after` (its last horizon) after
    /// which every event is later, by key, than every event up to it, with the greatest key up to
    /// it; nil when there is none. Asked of PostgreSQL, so that no event is read here: a cut is
    /// clean where the events up to it by version are the first as many by key, that is where the
    /// greatest rank by key so far equals the rank by version.
    func cleanCut(of account: UUID, after: Int64, atMost limit: Int64, on connection: PostgresConnection) async throws -> AccountHorizon? {
        let cuts = try await connection.guardedQuery("""
            SELECT c.version FROM (
                SELECT version, row_number() OVER (ORDER BY version) AS by_version,
                       max(by_key) OVER (ORDER BY version ROWS UNBOUNDED PRECEDING) AS reach
                FROM (SELECT version, row_number() OVER (ORDER BY hlc_wall, hlc_counter, device_id, seq) AS by_key
                      FROM events WHERE account_id = \(account) AND version > \(after)) e
            ) c
            WHERE c.reach = c.by_version AND c.version <= \(limit)
            ORDER BY c.version DESC LIMIT 1
            """, logger: logger).decode(Int64.self).collectAll()
        guard let cut = cuts.first else { return nil }
        let keys = try await connection.guardedQuery("""
            SELECT hlc_wall, hlc_counter, device_id, seq FROM events
            WHERE account_id = \(account) AND version > \(after) AND version <= \(cut)
            ORDER BY hlc_wall DESC, hlc_counter DESC, device_id DESC, seq DESC LIMIT 1
            """, logger: logger).decode((Int64, Int64, UUID, Int64).self).collectAll()
        guard let (wall, counter, device, seq) = keys.first else { return nil }
        return AccountHorizon(version: cut, key: EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq))
    }

    /// `body` with `account`'s events past `after` up to `last`, in version order, at most
    /// `compactionChunk` of them at a time, each chunk with the version before it.
    private func inChunks(of account: UUID, after: Int64, through last: Int64, on connection: PostgresConnection,
                          _ body: (_ chunk: [FoldEvent], _ before: Int64) async throws -> Void) async throws {
        var before = after
        while before < last {
            let upTo = before + min(Int64(compactionChunk), last - before)
            let chunk = try await FoldLogCoding().entries(try await connection.guardedQuery("""
                SELECT \(unescaped: FoldLogCoding.columns) FROM events
                WHERE account_id = \(account) AND version > \(before) AND version <= \(upTo) ORDER BY version
                """, logger: logger)).map(\.event)
            if !chunk.isEmpty { try await body(chunk, before) }
            before = upTo
        }
    }

    /// Every donation group of `account` as the snapshot at `horizon` and the events after it up
    /// to `head` fold it, those events folded into the snapshot's tables a chunk at a time
    /// (memory bounded whatever the history), the result compared with the live rows table by
    /// table (`differences(account:limit:against:)`, as `admin verify` compares a rebuild: every
    /// table the snapshot holds), then rolled back to the snapshot at the horizon. Throws
    /// `CompactionMismatch` where they differ.
    private func foldOfTheRest(account: UUID, horizon: Int64, head: Int64, on connection: PostgresConnection) async throws
        -> [DonationGroupID: DonationGroupRow] {
        let snapshot = ProjectionRowStore(tables: .snapshot, logger: logger)
        try await connection.guardedQuery("SAVEPOINT compaction_rest", logger: logger)
        try await inChunks(of: account, after: horizon, through: head, on: connection) { chunk, before in
            try await snapshot.fold(account: account, batch: AccountBatch(events: chunk, foldedVersion: before), on: connection)
        }
        let differences = try await self.differences(account: account, limit: 100, against: .snapshot, on: connection)
        let expected = try await groups(of: account, in: .snapshot, on: connection)
        try await connection.guardedQuery("ROLLBACK TO SAVEPOINT compaction_rest", logger: logger)
        guard differences.isEmpty else { throw CompactionMismatch(account: account, differences: differences.count, first: differences.first) }
        return expected
    }

    /// Drops from the account's learning rules, in the snapshot and the live rows, every device
    /// the snapshot's rules hold as signed out that has no event after `horizon`
    /// (`LearningRules.forgetSignOuts`): its sign-out and everything it pushed are folded into
    /// the snapshot, where its donations teach nothing, and a signed-out device pushes no more.
    private func forgetSignOutsBehind(_ horizon: Int64, of account: UUID, on connection: PostgresConnection) async throws {
        func rules(in tables: ProjectionTables) async throws -> LearningRules? {
            let rows = try await connection.guardedQuery("""
                SELECT learning FROM \(unescaped: tables.prefix)projection_accounts WHERE account_id = \(account)
                """, logger: logger)
            return try await rows.decode(ByteBuffer?.self).collectAll().first?.map(LearningRules.init(stored:))
        }
        guard let snapshotRules = try await rules(in: .snapshot), !snapshotRules.signedOut.isEmpty else { return }
        let after = try await connection.guardedQuery("""
            SELECT DISTINCT device_id FROM events WHERE account_id = \(account) AND version > \(horizon)
            """, logger: logger)
        let gone = snapshotRules.signedOut.subtracting(try await after.decode(UUID.self).collectAll())
        guard !gone.isEmpty else { return }
        for tables in [ProjectionTables.snapshot, .live] {
            guard var stored = try await rules(in: tables) else { continue }
            stored.forgetSignOuts(of: gone)
            try await connection.guardedQuery("""
                UPDATE \(unescaped: tables.prefix)projection_accounts SET learning = \(stored.bytes.map { ByteBuffer(bytes: $0) })
                WHERE account_id = \(account)
                """, logger: logger)
        }
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
