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
    /// On Citus: the live tables' rows a batch needs read by one call of `fold_read`
    /// (`FoldReadFunction`) and what it changed written by one of `fold_write`
    /// (`FoldWriteFunction`), each in the caller's transaction, where their statements are
    /// fast-path ones routed one by one; false: `FoldReadStatement` and `FoldWriteStatement`,
    /// one statement each, as on one PostgreSQL.
    public var distributed = false

    public init(tables: ProjectionTables, logger: Logger) {
        self.tables = tables
        self.logger = logger
    }

    /// Tells every server instance, when the transaction commits, which accounts' views changed
    /// (coalesced: as few notifications as the payload limit allows).
    public func notify(_ notification: ProjectionNotification, on connection: PostgresConnection) async throws {
        let payloads = ProjectionNotification.payloads(sender: notification.sender, versions: notification.versions, committedAt: notification.committedAt,
                                                        traces: notification.traces)
        guard !payloads.isEmpty else { return }
        _ = try await connection.guardedExecute(NotifyStatement(payloads: payloads), logger: logger)
    }

    /// The projection notifications, one a payload: prepared, as a server's announcer sends one
    /// every few milliseconds under load, and PostgreSQL then plans it once per connection.
    struct NotifyStatement: PostgresPreparedStatement {
        static let name = "ProjectionRowStore.notify"
        static let sql = "SELECT pg_notify('\(ProjectionNotification.channel)', payload) FROM unnest($1::text[]) AS payload"
        static var bindingDataTypes: [PostgresDataType] { [.textArray] }
        var payloads: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(payloads)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    /// Empties the tables (for a rebuild).
    public func reset(_ client: PostgresClient) async throws {
        let names = ProjectionTables.names.map { tables.prefix + $0 }.joined(separator: ", ")
        try await client.guardedQuery("TRUNCATE \(unescaped: names)", logger: logger)
    }

    // MARK: Reading what a batch needs

    /// The stored rows of `account` that its batch needs (empty rows when it has none stored),
    /// in one statement (`FoldReadStatement`) that names the account in every reference to a
    /// table (DESIGN §6), so that on a distributed database the account's shard alone answers it;
    /// `distributed`, the same rows by one call of `fold_read`.
    public func read(account: UUID, needs: FoldNeeds, on connection: PostgresConnection) async throws -> AccountFoldRows {
        try await readWithHead(account: account, needs: needs, device: nil, distributed: distributed, on: connection).rows
    }

    /// As `read`, with the account's head (nil when it has none) and `device`'s last seq in it.
    /// `distributed`: on Citus, where a push is read by `FoldReadFunction`.
    func readWithHead(
        account: UUID, needs: FoldNeeds, device: UUID?, distributed: Bool = false, on connection: PostgresConnection
    ) async throws -> (rows: AccountFoldRows, head: AccountHead?) {
        var needs = needs
        if needs.everyGroup {
            // A sign-out (rare): every group of the account is every group of each of its apps.
            let bundles = try await connection.guardedQuery("""
                SELECT DISTINCT bundle_id FROM \(unescaped: tables.prefix)projection_donation_groups WHERE account_id = \(account)
                """, logger: logger)
            for try await bundle in bundles.decode(String.self) { needs.bundles.insert(bundle) }
        }
        return switch tables {
        case .live where distributed:
            // On Citus, the same rows by fast-path statements in one call on the account's worker.
            try await readByDistributedFunction(account: account, needs: needs, device: device, on: connection)
        case .live where DonationReadStatement.covers(needs):
            // The common push (donations alone): the smaller statement, the same rows.
            try await read(DonationReadStatement(account: account, needs: needs, device: device), on: connection)
        case .live: try await read(FoldReadStatement<LiveProjectionTables>(account: account, needs: needs, device: device), on: connection)
        case .rebuild: try await read(FoldReadStatement<RebuildProjectionTables>(account: account, needs: needs, device: device), on: connection)
        case .snapshot: try await read(FoldReadStatement<SnapshotProjectionTables>(account: account, needs: needs, device: device), on: connection)
        }
    }

    func read<Statement: PostgresPreparedStatement>(
        _ statement: Statement, on connection: PostgresConnection
    ) async throws -> (rows: AccountFoldRows, head: AccountHead?) where Statement.Row == FoldReadRow {
        Self.fold(try await connection.guardedExecute(statement, logger: logger))
    }

    /// The rows of a push's read, as the fold takes them.
    static func fold(_ read: some Sequence<FoldReadRow>) -> (rows: AccountFoldRows, head: AccountHead?) {
        var rows = AccountFoldRows()
        var head: AccountHead?
        var forgotten: [ShortcutID: EventKey] = [:]
        for row in read {
            switch row {
            case .account(let version, let maxHLC, let learning, let shortcutCount, let horizon):
                rows.horizon = horizon
                rows.version = version
                rows.maxHLC = maxHLC
                rows.learning = learning
                rows.shortcutCount = shortcutCount
            case .group(let group): rows.groups[group.id] = group
            case .mark(let scope, let key): rows.marks[scope] = key
            case .forgotten(let shortcut, let key): forgotten[shortcut] = key
            case .voiceShortcut(let voice): rows.voiceShortcuts[voice.id] = voice
            case .device(let device, let reported): rows.devices[device] = reported
            case .head(let seen): head = seen
            }
        }
        for (shortcut, key) in forgotten { rows.learning.add(forgotten: shortcut, at: key) }
        return (rows, head)
    }

    // MARK: Folding

    /// Folds one account's batch into these tables, in the caller's transaction on `connection`,
    /// which must hold the account's head (or, for the rebuild tables, know that nothing else
    /// writes the account's rows): reads the rows the batch touches (one statement), folds its
    /// events with the domain's `AccountBatchFold`, asks the account's log what late deletions
    /// cover, and writes back what changed (one statement). Every statement
    /// names the account alone (DESIGN §6, §9).
    @discardableResult
    public func fold(account: UUID, batch: AccountBatch, on connection: PostgresConnection) async throws -> AccountBatchResult {
        let needs = FoldNeeds(events: batch.events)
        let stored = try await read(account: account, needs: needs, on: connection)
        let result = try await fold(account: account, batch: batch, needs: needs, stored: stored, on: connection)
        try await write(account: account, result, on: connection)
        return result
    }

    /// The fold of `batch` over the rows it needs (`stored`, read for `needs`): the domain's
    /// `AccountBatchFold`, and what late deletions cover asked of the account's log. Writes nothing.
    func fold(
        account: UUID, batch: AccountBatch, needs: FoldNeeds, stored: AccountFoldRows, on connection: PostgresConnection
    ) async throws -> AccountBatchResult {
        var fold = AccountBatchFold(before: stored, normalizedPhrases: needs.normalizedPhrases)
        for event in batch.events { fold.apply(event) }
        let recounts = fold.recounts, resums = fold.resums
        // The log past the horizon: what is compacted is the rows' (`AccountHorizon`).
        let horizon = stored.horizon?.version ?? 0
        let covered = try await countCovered(account: account, after: horizon, foldedVersion: batch.foldedVersion, recounts, on: connection)
        let resummed = try await countAgain(account: account, after: horizon, foldedVersion: batch.foldedVersion, resums, on: connection)
        // An account that never forgot a shortcut has no such mark to read.
        let forgotten = stored.learning.forgetsShortcuts
            ? try await forgottenShortcuts(account: account, of: recounts.map(\.group.shortcut) + resums.map(\.group.shortcut), on: connection)
            : [:]
        return try fold.finish(covered: covered.counts, coveredEligible: covered.eligible, resummed: resummed, forgottenShortcuts: forgotten)
    }

    // MARK: Counting a group's sums again

    /// For each resum (a learning event that landed among a group's donations), every donation
    /// eligible for prediction of its group with a key at or above its `from`, of those folded
    /// before the batch (`donations(…)`, one statement naming the account); only a batch with
    /// such a late learning event runs it, and it reads what the groups hold.
    func countAgain(
        account: UUID, after horizon: Int64, foldedVersion: Int64, _ resums: [AccountBatchFold.Resum], on connection: PostgresConnection
    ) async throws -> [DonationGroupID: [LoggedDonation]] {
        guard !resums.isEmpty else { return [:] }
        let froms = resums.map { $0.from ?? EventKey.lowest }
        var donations: [DonationGroupID: [LoggedDonation]] = [:]
        for resum in resums { donations[resum.group] = [] }
        let read = try await self.donations(account: account, of: resums.map(\.group.shortcut), walls: froms.map(\.hlc.wallMillis).min()!...Int64.max,
                                            versions: (horizon, foldedVersion), eligibleOnly: true, on: connection)
        for donation in read {
            for (index, resum) in resums.enumerated() where resum.group == donation.group && donation.logged.key >= froms[index] {
                donations[resum.group, default: []].append(donation.logged)
            }
        }
        return donations
    }

    /// The donations of `shortcuts` in the account's log with a wall clock in `walls` and a version
    /// past `versions.after` up to `versions.through` (eligible for prediction alone, if asked):
    /// each with its group and whether it is eligible. A superset of what a recount or a resum
    /// covers, which the caller cuts down by group and key: a statement of one table, the
    /// account's log, with no subquery or join, so that on Citus it is a fast-path router
    /// statement (joined to an `unnest` of the ranges, as it was, it was a router plan made anew
    /// at each run). The pairs of app and identifier are read as the apps' and the identifiers'
    /// product, through `events_donations_by_shortcut`.
    func donations(
        account: UUID, of shortcuts: [ShortcutID], walls: ClosedRange<Int64>, versions: (after: Int64, through: Int64), eligibleOnly: Bool,
        on connection: PostgresConnection
    ) async throws -> [(group: DonationGroupID, logged: LoggedDonation, eligible: Bool)] {
        let shortcuts = Set(shortcuts)
        let result = try await connection.guardedQuery("""
            SELECT e.body->>'bundleId', e.body->>'identifier', coalesce(e.body->>'groupIdentifier', ''), e.device_id, e.seq,
                   e.hlc_wall, e.hlc_counter, (e.body->>'utcOffsetMinutes')::int4, coalesce((e.body->>'eligibleForPrediction')::bool, true),
                   e.body->>'place'
            FROM events e
            WHERE e.account_id = \(account) AND e.type = 'donation'
              AND (e.body->>'bundleId') = ANY(\(Array(Set(shortcuts.map(\.bundleId))))::text[])
              AND (e.body->>'identifier') = ANY(\(Array(Set(shortcuts.map(\.identifier))))::text[])
              AND e.hlc_wall BETWEEN \(walls.lowerBound) AND \(walls.upperBound)
              AND (NOT \(eligibleOnly) OR coalesce((e.body->>'eligibleForPrediction')::bool, true))
              AND e.version > \(versions.after) AND e.version <= \(versions.through)
            """, logger: logger)
        var donations: [(group: DonationGroupID, logged: LoggedDonation, eligible: Bool)] = []
        for try await (bundleId, identifier, group, device, seq, wall, counter, offset, eligible, place) in
            result.decode((String, String, String, UUID, Int64, Int64, Int64, Int32?, Bool, String?).self) {
            let shortcut = ShortcutID(bundleId: bundleId, identifier: identifier)
            guard shortcuts.contains(shortcut) else { continue }
            let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
            donations.append((DonationGroupID(shortcut: shortcut, group: group),
                              LoggedDonation(key: key, habit: HabitDonation(deviceId: device, wallMillis: wall, utcOffsetMinutes: Int(offset ?? 0),
                                                                            placeToken: place)),
                              eligible))
        }
        return donations
    }

    /// The stored forgets of these shortcuts' learning (`LearningRules`), for the groups a batch
    /// recounts or resums, whose rows were read without them. One statement naming the account,
    /// only when there are such groups.
    func forgottenShortcuts(account: UUID, of shortcuts: [ShortcutID], on connection: PostgresConnection) async throws -> [ShortcutID: EventKey] {
        guard !shortcuts.isEmpty else { return [:] }
        let shortcuts = Set(shortcuts)
        // The apps' and identifiers' product, cut down here: one table, no join (fast-path on Citus).
        let marks = try await connection.guardedQuery("""
            SELECT m.bundle_id, m.value, m.key FROM \(unescaped: tables.prefix)projection_deletion_marks m
            WHERE m.account_id = \(account) AND m.scope = \(StoredScopes.forget)
              AND m.bundle_id = ANY(\(Array(Set(shortcuts.map(\.bundleId))))::text[]) AND m.value = ANY(\(Array(Set(shortcuts.map(\.identifier))))::text[])
            """, logger: logger)
        var forgotten: [ShortcutID: EventKey] = [:]
        for try await (bundleId, identifier, key) in marks.decode((String, String, ByteBuffer).self) {
            let shortcut = ShortcutID(bundleId: bundleId, identifier: identifier)
            if shortcuts.contains(shortcut) { forgotten[shortcut] = try EventKey(stored: key) }
        }
        return forgotten
    }

    // MARK: Counting covered donations

    /// For each recount, how many donations of its group with keys in its range the account's
    /// log holds past `horizon` up to `foldedVersion` (those folded before the batch; the compacted
    /// ones are the rows'), and those of them eligible for prediction (the fold takes back what
    /// they taught). One statement naming the account (`donations(…)`), over the span of the
    /// recounts' wall clocks: for one recount what its range holds of its shortcut, as the join of
    /// the ranges read through the index before; a donation is covered once (coverage only rises),
    /// so this stays O(1) amortised per event.
    public func countCovered(
        account: UUID, after horizon: Int64 = 0, foldedVersion: Int64, _ recounts: [AccountBatchFold.Recount], on connection: PostgresConnection
    ) async throws -> (counts: [DonationGroupID: Int], eligible: [DonationGroupID: [LoggedDonation]]) {
        guard !recounts.isEmpty else { return ([:], [:]) }
        let froms = recounts.map { $0.from ?? EventKey.lowest }
        let walls = froms.map(\.hlc.wallMillis).min()!...recounts.map(\.to.hlc.wallMillis).max()!
        let read = try await donations(account: account, of: recounts.map(\.group.shortcut), walls: walls,
                                       versions: (horizon, foldedVersion), eligibleOnly: false, on: connection)
        var counts: [DonationGroupID: Int] = [:]
        var eligible: [DonationGroupID: [LoggedDonation]] = [:]
        for recount in recounts { counts[recount.group] = 0 }
        for donation in read {
            for (index, recount) in recounts.enumerated()
            where recount.group == donation.group && donation.logged.key >= froms[index] && donation.logged.key < recount.to {
                counts[recount.group, default: 0] += 1
                if donation.eligible { eligible[recount.group, default: []].append(donation.logged) }
            }
        }
        return (counts, eligible)
    }
}

extension EventKey {
    /// Below every key: the start of a range open below (a recount's or a resum's `from`, nil).
    static let lowest = EventKey(hlc: HLCTimestamp(wallMillis: .min, counter: Int(Int64.min)), deviceId: UUID.zero, seq: .min)

    /// The key as its stored column (`sortableBytes`).
    var stored: ByteBuffer { ByteBuffer(bytes: sortableBytes) }

    init(stored buffer: ByteBuffer) throws {
        guard let key = EventKey(sortableBytes: buffer.readableBytesView) else {
            throw StoreError.corruptRow("a stored event key has \(buffer.readableBytes) bytes, not \(EventKey.sortableByteCount)")
        }
        guard key.isWithinLimits else {
            throw StoreError.corruptRow("a stored event key holds a clock or seq no event has (\(key.hlc.wallMillis).\(key.hlc.counter), seq \(key.seq))")
        }
        self = key
    }
}

/// Stored counts and versions, checked as they are read (issue 65, item 6): a row beyond
/// `Limits.storedCountRange` did not come from a fold, and is refused as corrupt before anything
/// is added to it.
enum StoredCount {
    static func checked(_ value: Int64, _ column: String, atLeast lowest: Int64 = 0) throws -> Int64 {
        guard value >= lowest, Limits.storedCountRange.contains(value) else {
            throw StoreError.corruptRow("a stored \(column) of \(value) is beyond what a fold writes (\(lowest) to \(Limits.storedCountRange.upperBound))")
        }
        return value
    }
}

extension ShortcutHabits {
    /// The sums as their stored column (`bytes`).
    init(stored buffer: ByteBuffer) throws {
        guard let habits = ShortcutHabits(bytes: buffer.readableBytesView) else {
            throw StoreError.corruptRow("stored suggestion sums of \(buffer.readableBytes) bytes cannot be read")
        }
        self = habits
    }
}

extension LearningRules {
    /// The rules as their stored column (`bytes`).
    init(stored buffer: ByteBuffer) throws {
        guard let rules = LearningRules(bytes: buffer.readableBytesView) else {
            throw StoreError.corruptRow("stored learning rules of \(buffer.readableBytes) bytes cannot be read")
        }
        self = rules
    }
}

extension PostgresRowSequence {
    /// Reads and drops every row, so the statement has surely run to its end.
    func drain() async throws {
        for try await _ in self {}
    }
}
