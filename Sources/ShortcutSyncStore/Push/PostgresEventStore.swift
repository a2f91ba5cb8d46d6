import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import Tracing

/// The event log in PostgreSQL (DESIGN §4, §6).
///
/// A push is one transaction on one connection: a single statement locks the account's head row,
/// checks that the batch continues the device's seqs, inserts it with the account's next versions
/// and moves the head; then the batch is folded into the account's projection rows
/// (`ProjectionRowStore.fold`), and everything commits together. Pushes of one account wait for
/// each other on the head row; pushes of different accounts never meet. Only when a batch does
/// not simply continue the device's seqs (a retry, a gap, a reuse) does the store look closer,
/// and it recognises duplicates by reading what the constraints guard, never by swallowing them.
public struct PostgresEventStore: Sendable, RoutedByAccount {
    public let client: PostgresClient
    public let logger: Logger
    /// How many lost races (a concurrent push of the same device) are retried.
    public var maxAttempts = 50
    /// The most shortcuts an account may hold (DESIGN §5): a push that would bring it past them is
    /// refused with `PersonLimit.shortcutsPerAccount`, and nothing of it is stored.
    public var maximumShortcuts = Limits.maxShortcutsPerAccount
    /// The most donation groups one shortcut may hold (DESIGN §5), refused the same way with
    /// `PersonLimit.groupsPerShortcut`.
    public var maximumGroups = Limits.maxGroupsPerShortcut
    /// The rows of this process's last pushes, folded over again by an account's next push of
    /// shortcuts among them without reading them (`FoldReadCache`); nil: every push reads its rows.
    public var readCache: FoldReadCache? = FoldReadCache()
    /// How the optimistic push's write is sent: one statement, or router statements on Citus
    /// (`PushWriteRoute`); by default the database is asked at the first push.
    public var writeRoute = PushWriteRoute()
    /// On a Citus cluster, where each account's push goes (`AccountRouter`): the worker that holds
    /// its shards. nil: every statement goes to `client`.
    public var router: AccountRouter?

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Appends a device's batch atomically and idempotently (DESIGN §4), and folds it in the same
    /// transaction unless the account is behind (`AppendResult.folded`).
    @discardableResult
    public func append(_ events: [Event], account: UUID, device: UUID) async throws -> AppendResult {
        guard !events.isEmpty else {
            let last = try await lastAcceptedSeq(account: account, device: device)
            return AppendResult(lastAcceptedSeq: last, version: try await version(account: account), appended: 0, folded: true)
        }
        // Seqs come from a client: out of range they are refused before any arithmetic on them
        // (callers validate first; this keeps the store from trapping when one does not).
        let outOfRange = events.indices.filter { !Limits.seqRange.contains(events[$0].seq) }
        guard outOfRange.isEmpty else {
            throw ValidationError(outOfRange.map {
                FieldError(pointer: "/events/\($0)/seq", detail: "must be 1 to \(Limits.seqRange.upperBound)")
            })
        }
        if let gap = events.indices.dropFirst().first(where: { events[$0].seq != events[$0 - 1].seq + 1 }) {
            let last = try await lastAcceptedSeq(account: account, device: device)
            throw AppendError.seqNotContiguous(index: gap, expectedSeq: events[gap - 1].seq + 1, lastAcceptedSeq: last)
        }

        try await requireDevicesOfAccount(in: events, account: account)

        var pending = events[...]
        var fold = true
        // Once known: the account's horizon, when events of the batch are older than it.
        var horizon: AccountHorizon?
        for attempt in 0..<maxAttempts {
            let outcome: AppendOutcome
            do {
                if attempt == 0, let appended = try await appendFoldedOptimistically(events[...], account: account, device: device) {
                    return appended
                }
                // What this process kept of the account is of no use past this write.
                readCache?.forget(account)
                let batch = horizon.map { Self.recorded(pending, of: device, after: $0) } ?? pending
                outcome = try await withStatementSpan("push: append and fold in a transaction", .insert, "events") {
                    try await pool(for: account).withConnection { connection in
                        try await appendAndFold(batch, account: account, device: device, fold: fold, on: connection)
                    }
                }
            } catch let late as LateEvents {
                // Older than the account's horizon: recorded at the clock they are folded at.
                horizon = late.horizon
                continue
            } catch let error as PSQLError where error.isUniqueViolation {
                if error.names(constraint: "events_event_id_key") {
                    throw try await idReuse(in: events, account: account, device: device)
                }
                continue  // a concurrent push of this device won the race: look again
            } catch let failure as FoldFailure {
                // A defect in the fold must not cost the person their push: it is stored unfolded,
                // the account parked, and the maintenance tasks try it again (DESIGN §6).
                logger.log(level: .error, "a push could not be folded: its events are stored and the account is parked", error: failure.error,
                           metadata: ["account": "\(account)"])
                fold = false
                continue
            }
            let head: Head
            switch outcome {
            case .noHead:
                throw AppendError.accountUnknown
            case .appended(let result):
                return result
            case .nothingInserted(let seen):
                head = seen
            }
            guard let firstPending = pending.first, firstPending.seq <= head.lastSeq else {
                throw AppendError.seqNotContiguous(index: events.count - pending.count, expectedSeq: head.lastSeq + 1, lastAcceptedSeq: head.lastSeq)
            }
            // Part of the batch was accepted before: those events must be exact retries.
            let accepted = try await acceptedEvents(device: device, account: account, seqs: firstPending.seq...min(head.lastSeq, pending.last!.seq))
            for (offset, event) in pending.enumerated() where event.seq <= head.lastSeq {
                let index = events.count - pending.count + offset
                guard accepted.holds(event) else {
                    throw AppendError.seqReused(index: index, seq: event.seq, lastAcceptedSeq: head.lastSeq)
                }
            }
            pending = pending.drop { $0.seq <= head.lastSeq }
            if pending.isEmpty {
                return AppendResult(lastAcceptedSeq: head.lastSeq, version: head.version, appended: 0, folded: head.foldedVersion == head.version)
            }
        }
        throw StoreError.tooMuchContention(attempts: maxAttempts)
    }

    /// DESIGN §5's bound, checked the same way on every path of a push: `held` is how many
    /// shortcuts the account's view holds with the batch, `added` those the batch brought. Past
    /// `maximumShortcuts`, the push is refused (`PersonLimit`, naming the first event that went
    /// past) and nothing of it is stored.
    private func requireRoom(for batch: ArraySlice<Event>, adding added: Set<ShortcutID>, held: Int) throws(PersonLimit) {
        if let limit = PersonLimit.firstShortcutBeyond(maximumShortcuts, in: batch, existing: held - added.count, new: added) { throw limit }
    }

    /// The bound on donation groups per shortcut, given the groups the batch gained.
    private func requireRoom(for batch: ArraySlice<Event>, gaining gained: [ShortcutID: GroupsGained]) throws(PersonLimit) {
        if let limit = PersonLimit.firstGroupBeyond(maximumGroups, in: batch, gained: gained) { throw limit }
    }

    /// The account's head as the append statement saw it (locked), and what it inserted.
    struct Head {
        var version: Int64
        var foldedVersion: Int64
        var lastSeq: Int64
        var inserted: Int
    }

    enum AppendOutcome: Sendable {
        /// The account has no head row: it was never made, or it was erased (while this push
        /// waited for its head, perhaps). Nothing was written.
        case noHead
        case appended(AppendResult)
        /// The batch does not continue the device's seqs: nothing was written.
        case nothingInserted(Head)
    }

    /// The fold of a push failed for a reason of its own (not the database's).
    struct FoldFailure: Error {
        var error: any Error
    }

    /// A push folded events older than the account's horizon, having recorded them at their own
    /// clock: it is rolled back and made again with them at the horizon's (`recorded`).
    struct LateEvents: Error {
        var horizon: AccountHorizon
    }

    /// The common push in three round trips and no transaction (DESIGN §6): read the rows the
    /// batch needs with the head, fold, then append and write the fold in one statement that
    /// writes only if the head has not been written since the read (`AppendFoldedStatement`; on
    /// Citus, a transaction of router statements that does the same, `PushWriteRoute`). In
    /// two, when this process wrote the account last and kept the rows the batch needs: the fold
    /// is then over the rows that write left (`FoldReadCache`), and the same statement checks
    /// that nothing wrote the account since (else the rows are read after all). Nil when
    /// it cannot go this way (the account has no head or is behind, the batch does not simply
    /// continue the device's seqs, another push of the account came first, or the fold failed):
    /// the locking way then does it, and says why where that is the caller's business.
    private func appendFoldedOptimistically(_ batch: ArraySlice<Event>, account: UUID, device: UUID) async throws -> AppendResult? {
        guard let first = batch.first else { return nil }
        do {
            return try await optimisticAttempt(batch, first: first, account: account, device: device)
        } catch let error as PSQLError where error.isUniqueViolation {
            throw error  // the caller tells a retry from a reuse
        } catch let limit as PersonLimit {
            throw limit
        } catch where error is CancellationError || Task.isCancelled || DatabaseAvailability.isUnavailable(error) {
            throw error
        } catch {
            // Something in these events or rows (a fold that fails, a row a constraint refuses):
            // the locking way meets it again, and keeps the push with its account parked.
            logger.log(level: .debug, "an optimistic push went the locking way", error: error, metadata: ["account": "\(account)"])
            return nil
        }
    }

    /// `batch` as the log records it past `horizon`: an event older than it at the clock just after
    /// it (`AccountHorizon.effectiveKey`), the others as they are.
    static func recorded(_ batch: ArraySlice<Event>, of device: UUID, after horizon: AccountHorizon) -> ArraySlice<Event> {
        ArraySlice(batch.map { event in
            var event = event
            event.hlc = horizon.effectiveKey(EventKey(hlc: event.hlc, deviceId: device, seq: event.seq)).hlc
            return event
        })
    }

    private func optimisticAttempt(
        _ batch: ArraySlice<Event>, first: Event, account: UUID, device: UUID
    ) async throws -> AppendResult? {
        // Their versions are known once the head is read; what the batch needs does not depend on them.
        let events = batch.map { FoldEvent(AcceptedEvent(deviceId: device, event: $0), version: 0) }
        // A learning event (rare) writes the account's rules in a statement of their own: the locking way.
        guard !events.contains(where: \.changesLearning) else { return nil }
        let needs = FoldNeeds(events: events)
        return try await pool(for: account).withConnection { connection -> AppendResult? in
            if let kept = readCache?.rows(of: account, needs: needs, device: device, after: first.seq - 1) {
                do {
                    if let appended = try await foldAndWrite(batch, events, needs: needs, over: kept.rows, reading: kept.needs, at: kept.head,
                                                             knowing: kept.deviceSeqs, kept: true, account: account, device: device,
                                                             on: connection) {
                        return appended
                    }
                } catch let error as PSQLError where error.isUniqueViolation {
                    throw error  // the caller tells a retry from a reuse
                } catch where error is CancellationError || Task.isCancelled || DatabaseAvailability.isUnavailable(error) {
                    throw error
                } catch {
                    // A refusal or a failure decided on kept rows is decided again on read ones.
                }
                // Something wrote the account since: read it.
                readCache?.forget(account)
            }
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            // With the needs of the account's last pushes, if any are kept: the rows of the next push among them.
            let reading = readCache?.needsToRead(of: account, with: needs) ?? needs
            let distributed = try await writeRoute.form(on: connection, logger: logger) == .distributedFunction
            let (stored, head) = try await withStatementSpan("push: read the head and the rows to fold", .select, "account_heads") {
                try await rows.readWithHead(account: account, needs: reading, device: device, distributed: distributed, on: connection)
            }
            guard let head, head.foldedVersion == head.version, head.deviceLastSeq == first.seq - 1 else {
                readCache?.forget(account)
                return nil
            }
            let known = readCache?.deviceSeqs(of: account, at: head.mark) ?? [:]
            return try await foldAndWrite(batch, events, needs: needs, over: stored, reading: reading, at: head, knowing: known,
                                          kept: false, account: account, device: device, on: connection)
        }
    }

    /// The batch folded over `stored` (the rows of `reading`, which holds the batch's `needs`, at
    /// `head`), checked against the bounds, and appended and written in one statement if the head
    /// is still `head`; nil when it is not. Keeps the rows it wrote for the account's next push
    /// (`readCache`) when it can follow them.
    private func foldAndWrite(
        _ batch: ArraySlice<Event>, _ unversioned: [FoldEvent], needs: FoldNeeds, over stored: AccountFoldRows, reading: FoldNeeds,
        at head: AccountHead, knowing deviceSeqs: [UUID: Int64], kept: Bool, account: UUID, device: UUID, on connection: PostgresConnection
    ) async throws -> AppendResult? {
        // Events older than the account's horizon (rare): the locking way records them at its clock.
        if let horizon = stored.horizon, unversioned.contains(where: { $0.key <= horizon.key }) { return nil }
        var events = unversioned
        for index in events.indices { events[index].version = head.version + Int64(index) + 1 }
        let rows = ProjectionRowStore(tables: .live, logger: logger)
        let result = try await withSpan("push: fold") { _ in
            // Exactly the rows a read for the batch's own needs returns.
            try await rows.fold(account: account, batch: AccountBatch(events: events, foldedVersion: head.version),
                                needs: needs, stored: reading == needs ? stored : stored.narrowed(to: needs), on: connection)
        }
        try requireRoom(for: batch, gaining: result.groupsGained)
        // The bound, exactly: what the view will hold once these rows are written (the fold
        // keeps the count on the account's row; nothing is counted).
        try requireRoom(for: batch, adding: result.addedShortcuts, held: result.shortcutCount)
        let routed = try await writeRoute.form(on: connection, logger: logger) == .distributedFunction
        // Only the arms this fold writes: a push of donations alone runs the smaller statement.
        let written = if DonationFoldArms.holds(result) {
            try await appendFolded(AppendFoldedStatement<DonationFoldArms>(
                account: account, device: device, batch: batch, expectedVersion: head.version, expectedMark: head.mark, result: result,
                history: Self.newHistory()),
                routed: routed, on: connection)
        } else {
            try await appendFolded(AppendFoldedStatement<EveryFoldArm>(
                account: account, device: device, batch: batch, expectedVersion: head.version, expectedMark: head.mark, result: result,
                history: Self.newHistory()),
                routed: routed, on: connection)
        }
        guard let written, let last = batch.last else { return nil }
        let version = head.version + Int64(written.appended)
        if let readCache {
            readCache.tally(overKeptRows: kept)
            if let rows = stored.written(result, needs: reading) {
                var seqs = deviceSeqs
                seqs[device] = last.seq
                readCache.keep(FoldReadCache.Entry(head: AccountHead(version: version, foldedVersion: version, deviceLastSeq: last.seq, mark: written.mark),
                                                   needs: reading, rows: rows, deviceSeqs: seqs), for: account)
            } else {
                readCache.forget(account)
            }
        }
        return AppendResult(lastAcceptedSeq: last.seq, version: version, appended: written.appended, folded: true, overKeptRows: kept)
    }

    /// How many events `statement` appended and the head's new mark: nil when its head check
    /// failed. `routed`: as one call of the distributed function, on Citus (`PushWriteRoute`, `PushWriteFunction`).
    private func appendFolded<Arms>(
        _ statement: AppendFoldedStatement<Arms>, routed: Bool, on connection: PostgresConnection
    ) async throws -> (appended: Int, mark: String)? {
        if routed {
            return try await withStatementSpan("push: append and write the fold in one call on the account's worker", .insert, "events") {
                try await statement.runAsDistributedFunction(on: connection, logger: logger)
            }
        }
        return try await withStatementSpan("push: append and write the fold", .insert, "events") {
            try await connection.guardedExecute(statement, logger: logger).first ?? nil
        }
    }

    /// One attempt, in one transaction on `connection`: the append statement, then (when it
    /// inserted, the account was current and `fold`) the fold of the new events, which moved the
    /// folded version with the head. Without `fold` the account is parked instead.
    private func appendAndFold(
        _ batch: ArraySlice<Event>, account: UUID, device: UUID, fold: Bool, after: Int64? = nil, on connection: PostgresConnection
    ) async throws -> AppendOutcome {
        try await connection.inTransaction(logger: logger) { connection in
            try await appendAndFold(batch, account: account, device: device, fold: fold, after: after, inTransactionOn: connection)
        }
    }

    /// `appendAndFold` in the caller's transaction on `connection`, which commits or rolls back
    /// with whatever else it holds (a rotation's sign-outs, `signOutDevices`).
    func appendAndFold(
        _ batch: ArraySlice<Event>, account: UUID, device: UUID, fold: Bool, after: Int64?, inTransactionOn connection: PostgresConnection
    ) async throws -> AppendOutcome {
        let statement = AppendStatement(account: account, device: device, batch: batch, fold: fold, after: after)
        guard let head = try await connection.guardedExecute(statement, logger: logger).first else { return .noHead }
        guard head.inserted > 0 else { return .nothingInserted(head) }
        let version = head.version + Int64(head.inserted)
        let current = head.foldedVersion == head.version
        if current && fold {
            let events = batch.enumerated().map { offset, event in
                FoldEvent(AcceptedEvent(deviceId: device, event: event), version: head.version + Int64(offset) + 1)
            }
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            let result: AccountBatchResult
            do {
                result = try await rows.fold(account: account, batch: AccountBatch(events: events, foldedVersion: head.version), on: connection)
            } catch where !(error is CancellationError) && !Task.isCancelled && !DatabaseAvailability.isUnavailable(error) {
                // Not the database being away or busy: something in these events or rows.
                throw FoldFailure(error: error)
            }
            // The bound, exactly: the view now holds the batch (its count kept by the fold);
            // throwing rolls the whole push back.
            try requireRoom(for: batch, gaining: result.groupsGained)
            if let scope = result.learningChangesBeyondLimit {
                let index = batch.firstIndex { if case .learningPaused(let paused) = $0.body { paused.scope == scope } else { false } }
                throw PersonLimit.learningChangesPerScope(max: Limits.maxLearningChangesPerScope,
                                                          index: (index ?? batch.startIndex) - batch.startIndex)
            }
            try requireRoom(for: batch, adding: result.addedShortcuts, held: result.shortcutCount)
            // Events older than the account's horizon were folded just after it: the log must
            // hold them at that clock too, so the push is made again with them there.
            if let horizon = result.lateHorizon { throw LateEvents(horizon: horizon) }
        } else {
            // Not folded (the account is behind): the bound against the view as folded so far.
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            let donated = Set(batch.compactMap { event -> ShortcutID? in
                guard case .donation(let donation) = event.body else { return nil }
                return ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier)
            })
            if !donated.isEmpty {
                let headroom = try await rows.shortcutHeadroom(account: account, keys: Array(donated), on: connection)
                try requireRoom(for: batch, adding: headroom.new, held: headroom.existing + headroom.new.count)
                // Groups against those folded so far, each donated group counted (a deletion
                // of the batch that would leave fewer is not folded yet).
                let held = try await rows.donationGroups(account: account, of: Array(donated), on: connection)
                try requireRoom(for: batch, gaining: PersonLimit.groupsGained(by: batch, holding: held))
            }
            if current {
                try await rows.park(account, version: head.version + 1, error: "a push's fold failed", on: connection)
            }
        }
        return .appended(AppendResult(lastAcceptedSeq: batch.last!.seq, version: version, appended: head.inserted, folded: current && fold))
    }

    /// The append as a prepared statement: every push runs it, and PostgreSQL then parses and
    /// plans it once per connection instead of once per push. It returns no row when the account
    /// has no head; else the head before the push and how many events it inserted (none unless
    /// the batch continues the device's seqs).
    ///
    /// The head is read `FOR NO KEY UPDATE`: a push of the same account waits here, and then sees
    /// the head that push left (a pull's key-share lock of the head waits for neither, issue 65,
    /// item 8). The device's last seq is read in the statement's snapshot, which may be
    /// older than that wait: a push of the same device that committed meanwhile makes this one
    /// break `events_device_seq_key`, and the append looks again.
    struct AppendStatement: PostgresPreparedStatement {
        static let name = "Append"
        static let sql = """
            WITH head AS (
                SELECT version, folded_version FROM account_heads WHERE account_id = $1 FOR NO KEY UPDATE
            ), device AS (
                SELECT coalesce((SELECT e.seq FROM events e WHERE e.account_id = $1 AND e.device_id = $2 ORDER BY e.seq DESC LIMIT 1), 0) AS last_seq
            ), inserted AS (
                INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
                SELECT $1, head.version + b.ord, $2, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb, $11
                FROM head, device, unnest($3::uuid[], $4::int8[], $5::text[], $6::int8[], $7::int8[], $8::text[])
                     WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord)
                WHERE device.last_seq = $9
                RETURNING 1
            ), moved AS (
                UPDATE account_heads h
                SET version = h.version + n.count, history = $11,
                    folded_version = CASE WHEN $10 AND h.folded_version = h.version THEN h.version + n.count ELSE h.folded_version END
                FROM (SELECT count(*) AS count FROM inserted) n
                WHERE h.account_id = $1 AND n.count > 0
            )
            SELECT head.version, head.folded_version, device.last_seq, (SELECT count(*) FROM inserted)
            FROM head, device
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .uuidArray, .int8Array, .textArray, .int8Array, .int8Array,
                                                           .textArray, .int8, .bool, .int8]

        var account: UUID
        var device: UUID
        /// Not empty.
        var batch: ArraySlice<Event>
        var fold: Bool
        /// The device's last seq the batch follows: the one before its first, unless given.
        var after: Int64?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            bindings.append(account)
            bindings.append(device)
            bindings.appendColumns(of: batch, bodies: batch.map(\.body.fieldsJSON))
            bindings.append(after ?? batch.first.map { $0.seq - 1 } ?? 0)
            bindings.append(fold)
            bindings.append(PostgresEventStore.newHistory())
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Head {
            let (version, folded, lastSeq, inserted) = try row.decode((Int64, Int64, Int64, Int64).self)
            return Head(version: version, foldedVersion: folded, lastSeq: lastSeq, inserted: Int(inserted))
        }
    }

    /// A push's history value (migration 0027): random, drawn for each push that assigns
    /// versions, written to the head and to each of its events in their existing statements. A
    /// pull's cursor names the value of its version, so that after a restore the versions
    /// assigned anew (to other events) are told from those of the lost timeline. Never 0, which
    /// names version 0, the empty view of every history.
    static func newHistory() -> Int64 { Int64.random(in: 1...Int64.max) }

    /// What was accepted of `device`'s `seqs`: the log's events, and where a compaction removed
    /// them, their fingerprints (`RetryFingerprints`).
    struct AcceptedSeqs {
        var ids: [Int64: UUID] = [:]
        var fingerprints: [RetryFingerprints] = []

        /// Whether `event` is one accepted before: its seq's id, or that id's fingerprint.
        func holds(_ event: Event) -> Bool {
            if let id = ids[event.seq] { return id == event.id }
            guard let kept = fingerprints.lazy.compactMap({ $0.fingerprint(at: event.seq) }).first else { return false }
            return kept == RetryFingerprints.fingerprint(of: event.id)
        }
    }

    private func acceptedEvents(device: UUID, account: UUID, seqs: ClosedRange<Int64>) async throws -> AcceptedSeqs {
        let rows = try await pool(for: account).guardedQuery("""
            SELECT seq, event_id FROM events
            WHERE account_id = \(account) AND device_id = \(device) AND seq BETWEEN \(seqs.lowerBound) AND \(seqs.upperBound)
            """, logger: logger)
        var accepted = AcceptedSeqs()
        for try await (seq, id) in rows.decode((Int64, UUID).self) {
            accepted.ids[seq] = id
        }
        guard accepted.ids.count < seqs.count else { return accepted }
        // Some were compacted away (migration 0029): what recognises them.
        let kept = try await pool(for: account).guardedQuery("""
            SELECT first_seq, fingerprints FROM retry_fingerprints
            WHERE account_id = \(account) AND device_id = \(device)
              AND first_seq <= \(seqs.upperBound) AND first_seq + length(fingerprints) / 2 > \(seqs.lowerBound)
            """, logger: logger)
        for try await (first, fingerprints) in kept.decode((Int64, ByteBuffer).self) {
            accepted.fingerprints.append(RetryFingerprints(deviceId: device, firstSeq: first, fingerprints: Array(fingerprints.readableBytesView)))
        }
        return accepted
    }

    /// Names the first event of the batch whose id the account already used for another event:
    /// another seq, or another device. Exact retries earlier in the batch (same device, seq and
    /// id) are not reuses.
    private func idReuse(in events: [Event], account: UUID, device: UUID) async throws -> AppendError {
        let rows = try await pool(for: account).guardedQuery(
            "SELECT event_id, device_id, seq FROM events WHERE account_id = \(account) AND event_id = ANY(\(events.map(\.id)))",
            logger: logger)
        var stored: [UUID: (device: UUID, seq: Int64)] = [:]
        for try await (id, storedDevice, seq) in rows.decode((UUID, UUID, Int64).self) {
            stored[id] = (storedDevice, seq)
        }
        let index = events.firstIndex { event in
            stored[event.id].map { $0.device != device || $0.seq != event.seq } ?? false
        } ?? 0
        return .idReused(index: index, id: events[index].id)
    }

    /// Signs a device out: its token is revoked (`AccountStore.revokeDevice`), then its sign-out
    /// is appended to the log (`appendSignOut`). False if the account has no such device. A
    /// sign-out that failed between the two is finished by doing it again.
    public func signOut(device: UUID, account: UUID, wallMillis: Int64) async throws -> Bool {
        guard try await AccountStore(client: client, logger: logger).revokeDevice(device, account: account) else { return false }
        try await appendSignOut(account: account, device: device, wallMillis: wallMillis)
        return true
    }

    /// Appends `device`'s sign-out (DESIGN §3), once its token is revoked: its last event, with the
    /// greatest seq there is, so that nothing of the device can follow it (a push of it still under
    /// way finds its seqs taken and stores nothing). Folded like a push, in its own transaction, it
    /// takes what the device taught the suggestions out of every donation group, through the log,
    /// so that a rebuild forgets it too. A device whose last event is its sign-out gets no other.
    public func appendSignOut(account: UUID, device: UUID, wallMillis: Int64) async throws {
        let signOut = Event(seq: Limits.seqRange.upperBound, hlc: HLCTimestamp(wallMillis: wallMillis), body: .signedOut)
        var fold = true
        for _ in 0..<maxAttempts {
            let last = try await lastAcceptedSeq(account: account, device: device)
            guard last < signOut.seq else { return }
            let outcome: AppendOutcome
            do {
                readCache?.forget(account)
                outcome = try await pool(for: account).withConnection { connection in
                    try await appendAndFold([signOut][...], account: account, device: device, fold: fold, after: last, on: connection)
                }
            } catch let error as PSQLError where error.isUniqueViolation {
                continue  // a push of the device came between: look again
            } catch let failure as FoldFailure {
                logger.log(level: .error, "a sign-out could not be folded: it is stored and the account is parked", error: failure.error,
                           metadata: ["account": "\(account)"])
                fold = false
                continue
            }
            switch outcome {
            case .noHead: throw AppendError.accountUnknown
            case .appended: return
            case .nothingInserted: continue
            }
        }
        throw StoreError.tooMuchContention(attempts: maxAttempts)
    }

    /// The greatest seq accepted from a device, 0 when none.
    public func lastAcceptedSeq(account: UUID, device: UUID) async throws -> Int64 {
        try await pool(for: account).guardedQuery(
            "SELECT seq FROM events WHERE account_id = \(account) AND device_id = \(device) ORDER BY seq DESC LIMIT 1",
            logger: logger).decode(Int64.self).collectAll().first ?? 0
    }

    /// The account's version: that of its last event, 0 when it has none.
    public func version(account: UUID) async throws -> Int64 {
        try await pool(for: account).guardedQuery(
            "SELECT version FROM events WHERE account_id = \(account) ORDER BY version DESC LIMIT 1",
            logger: logger).decode(Int64.self).collectAll().first ?? 0
    }

    /// The events of one account in version order, for replay and admin queries.
    public func readStream(account: UUID, after version: Int64, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.guardedQuery("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(account) AND version > \(version)
            ORDER BY version
            LIMIT \(limit)
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }
}
