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
    /// On Citus, the live tables' fold written as one router statement per arm that writes
    /// (`FoldArm.routedSQL`), each sent to the account's worker whole, in the caller's transaction;
    /// false: one statement of every arm (`FoldWriteStatement`), as on one PostgreSQL.
    public var routedArms = false

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
    /// table (DESIGN §6), so that on a distributed database the account's shard alone answers it.
    public func read(account: UUID, needs: FoldNeeds, on connection: PostgresConnection) async throws -> AccountFoldRows {
        try await readWithHead(account: account, needs: needs, device: nil, on: connection).rows
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
    /// before the batch. One statement, naming the account; only a batch with such a late
    /// learning event runs it, and it reads what the groups hold.
    func countAgain(
        account: UUID, after horizon: Int64, foldedVersion: Int64, _ resums: [AccountBatchFold.Resum], on connection: PostgresConnection
    ) async throws -> [DonationGroupID: [LoggedDonation]] {
        guard !resums.isEmpty else { return [:] }
        let lowest = EventKey(hlc: HLCTimestamp(wallMillis: .min, counter: Int(Int64.min)), deviceId: UUID.zero, seq: .min)
        let froms = resums.map { $0.from ?? lowest }
        let result = try await connection.guardedQuery("""
            SELECT r.n, e.device_id, e.seq, e.hlc_wall, e.hlc_counter, (e.body->>'utcOffsetMinutes')::int4, e.body->>'place'
            FROM unnest(\(resums.map(\.group.shortcut.bundleId))::text[],
                        \(resums.map(\.group.shortcut.identifier))::text[], \(resums.map(\.group.group))::text[],
                        \(froms.map(\.hlc.wallMillis))::int8[], \(froms.map { Int64($0.hlc.counter) })::int8[],
                        \(froms.map(\.deviceId))::uuid[], \(froms.map(\.seq))::int8[])
                 WITH ORDINALITY AS r(b, i, g, fw, fc, fd, fs, n)
            JOIN events e ON e.account_id = \(account) AND e.type = 'donation'
                  AND (e.body->>'bundleId') = r.b AND (e.body->>'identifier') = r.i
                  AND e.hlc_wall >= r.fw
                  AND coalesce(e.body->>'groupIdentifier', '') = r.g
                  AND (e.hlc_wall, e.hlc_counter, e.device_id, e.seq) >= (r.fw, r.fc, r.fd, r.fs)
                  AND coalesce((e.body->>'eligibleForPrediction')::bool, true)
                  AND e.version > \(horizon) AND e.version <= \(foldedVersion)
            """, logger: logger)
        var donations: [DonationGroupID: [LoggedDonation]] = [:]
        for resum in resums { donations[resum.group] = [] }
        for try await (ordinal, device, seq, wall, counter, offset, place) in result.decode((Int64, UUID, Int64, Int64, Int64, Int32?, String?).self) {
            let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
            donations[resums[Int(ordinal) - 1].group, default: []].append(
                LoggedDonation(key: key, habit: HabitDonation(deviceId: device, wallMillis: wall, utcOffsetMinutes: Int(offset ?? 0), placeToken: place)))
        }
        return donations
    }

    /// The stored forgets of these shortcuts' learning (`LearningRules`), for the groups a batch
    /// recounts or resums, whose rows were read without them. One statement naming the account,
    /// only when there are such groups.
    func forgottenShortcuts(account: UUID, of shortcuts: [ShortcutID], on connection: PostgresConnection) async throws -> [ShortcutID: EventKey] {
        guard !shortcuts.isEmpty else { return [:] }
        let shortcuts = Array(Set(shortcuts))
        let marks = try await connection.guardedQuery("""
            SELECT m.bundle_id, m.value, m.key
            FROM unnest(\(shortcuts.map(\.bundleId))::text[], \(shortcuts.map(\.identifier))::text[]) AS k(b, i)
            JOIN \(unescaped: tables.prefix)projection_deletion_marks m
              ON m.account_id = \(account) AND m.bundle_id = k.b AND m.scope = \(StoredScopes.forget) AND m.value = k.i
            """, logger: logger)
        var forgotten: [ShortcutID: EventKey] = [:]
        for try await (bundleId, identifier, key) in marks.decode((String, String, ByteBuffer).self) {
            forgotten[ShortcutID(bundleId: bundleId, identifier: identifier)] = try EventKey(stored: key)
        }
        return forgotten
    }

    // MARK: Counting covered donations

    /// For each recount, how many donations of its group with keys in its range the account's
    /// log holds past `horizon` up to `foldedVersion` (those folded before the batch; the compacted
    /// ones are the rows'), and those of them eligible
    /// for prediction (the fold takes back what they taught). One statement,
    /// naming the account; it reads each covered donation once, and a donation is covered once
    /// (coverage only rises), so this stays O(1) amortised per event.
    public func countCovered(
        account: UUID, after horizon: Int64 = 0, foldedVersion: Int64, _ recounts: [AccountBatchFold.Recount], on connection: PostgresConnection
    ) async throws -> (counts: [DonationGroupID: Int], eligible: [DonationGroupID: [LoggedDonation]]) {
        guard !recounts.isEmpty else { return ([:], [:]) }
        let lowest = EventKey(hlc: HLCTimestamp(wallMillis: .min, counter: Int(Int64.min)), deviceId: UUID.zero, seq: .min)
        let froms = recounts.map { $0.from ?? lowest }, tos = recounts.map(\.to)
        let result = try await connection.guardedQuery("""
            SELECT r.n, e.device_id, e.seq, e.hlc_wall, e.hlc_counter, (e.body->>'utcOffsetMinutes')::int4,
                   coalesce((e.body->>'eligibleForPrediction')::bool, true), e.body->>'place'
            FROM unnest(\(recounts.map(\.group.shortcut.bundleId))::text[],
                        \(recounts.map(\.group.shortcut.identifier))::text[], \(recounts.map(\.group.group))::text[],
                        \(froms.map(\.hlc.wallMillis))::int8[], \(froms.map { Int64($0.hlc.counter) })::int8[],
                        \(froms.map(\.deviceId))::uuid[], \(froms.map(\.seq))::int8[],
                        \(tos.map(\.hlc.wallMillis))::int8[], \(tos.map { Int64($0.hlc.counter) })::int8[],
                        \(tos.map(\.deviceId))::uuid[], \(tos.map(\.seq))::int8[])
                 WITH ORDINALITY AS r(b, i, g, fw, fc, fd, fs, tw, tc, td, ts, n)
            JOIN events e ON e.account_id = \(account) AND e.type = 'donation'
                  AND (e.body->>'bundleId') = r.b AND (e.body->>'identifier') = r.i
                  AND e.hlc_wall BETWEEN r.fw AND r.tw
                  AND coalesce(e.body->>'groupIdentifier', '') = r.g
                  AND (e.hlc_wall, e.hlc_counter, e.device_id, e.seq) >= (r.fw, r.fc, r.fd, r.fs)
                  AND (e.hlc_wall, e.hlc_counter, e.device_id, e.seq) < (r.tw, r.tc, r.td, r.ts)
                  AND e.version > \(horizon) AND e.version <= \(foldedVersion)
            """, logger: logger)
        var counts: [DonationGroupID: Int] = [:]
        var eligible: [DonationGroupID: [LoggedDonation]] = [:]
        for recount in recounts { counts[recount.group] = 0 }
        for try await (ordinal, device, seq, wall, counter, offset, taught, place) in
            result.decode((Int64, UUID, Int64, Int64, Int64, Int32?, Bool, String?).self) {
            let group = recounts[Int(ordinal) - 1].group
            counts[group, default: 0] += 1
            guard taught else { continue }
            let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
            eligible[group, default: []].append(
                LoggedDonation(key: key, habit: HabitDonation(deviceId: device, wallMillis: wall, utcOffsetMinutes: Int(offset ?? 0), placeToken: place)))
        }
        return (counts, eligible)
    }
}

extension EventKey {
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
