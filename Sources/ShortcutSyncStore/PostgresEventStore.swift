import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The event log in PostgreSQL (DESIGN §4, §6).
///
/// An append is a single `INSERT … SELECT FROM unnest(…)` statement, so it is atomic without an
/// explicit transaction and costs one round trip when the batch simply continues the device's
/// seqs. Only when it does not (a retry, a gap, a reuse) does the store look closer, and it
/// recognises duplicates by reading what the constraints guard, never by swallowing conflicts.
public struct PostgresEventStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// How many lost races with concurrent appends to the same account are retried.
    public var maxAttempts = 50

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Appends a device's batch atomically and idempotently (DESIGN §4).
    @discardableResult
    public func append(_ events: [Event], account: UUID, device: UUID, expectedVersion: ExpectedVersion = .any) async throws -> AppendResult {
        guard !events.isEmpty else {
            let last = try await lastAcceptedSeq(account: account, device: device)
            return AppendResult(lastAcceptedSeq: last, position: 0, appended: 0, streamVersion: try await streamVersion(account: account))
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

        var pending = events[...]
        var positionOfRetried: Int64 = 0
        for _ in 0..<maxAttempts {
            let head: Head
            do {
                head = try await insertIfContinuing(pending, account: account, device: device, expectedVersion: expectedVersion)
            } catch let error as PSQLError where error.isUniqueViolation {
                switch error.constraintName {
                case "events_event_id_key":
                    throw try await idReuse(in: events, account: account, device: device)
                case "events_stream_version_key" where expectedVersion != .any:
                    let actual = try await streamVersion(account: account)
                    if case .exactly(let expected) = expectedVersion {
                        throw AppendError.wrongExpectedVersion(expected: expected, actual: actual)
                    }
                    continue
                default:
                    continue  // a concurrent append to this account or device won the race: look again
                }
            }
            if head.inserted > 0 {
                return AppendResult(lastAcceptedSeq: pending.last!.seq, position: head.maxPosition,
                                    appended: head.inserted, streamVersion: head.maxVersion)
            }
            if case .exactly(let expected) = expectedVersion, head.version != expected {
                throw AppendError.wrongExpectedVersion(expected: expected, actual: head.version)
            }
            guard let firstPending = pending.first, firstPending.seq <= head.lastSeq else {
                throw AppendError.seqNotContiguous(index: events.count - pending.count, expectedSeq: head.lastSeq + 1, lastAcceptedSeq: head.lastSeq)
            }
            // Part of the batch was accepted before: those events must be exact retries.
            let accepted = try await acceptedEvents(device: device, account: account, seqs: firstPending.seq...min(head.lastSeq, pending.last!.seq))
            for (offset, event) in pending.enumerated() where event.seq <= head.lastSeq {
                let index = events.count - pending.count + offset
                guard let stored = accepted[event.seq], stored.id == event.id else {
                    throw AppendError.seqReused(index: index, seq: event.seq, lastAcceptedSeq: head.lastSeq)
                }
                positionOfRetried = max(positionOfRetried, stored.position)
            }
            pending = pending.drop { $0.seq <= head.lastSeq }
            if pending.isEmpty {
                return AppendResult(lastAcceptedSeq: head.lastSeq, position: positionOfRetried, appended: 0, streamVersion: head.version)
            }
        }
        throw StoreError.tooMuchContention(attempts: maxAttempts)
    }

    /// The stream head as the append statement saw it, and what it inserted.
    struct Head {
        var version: Int64
        var lastSeq: Int64
        var inserted: Int
        var maxPosition: Int64
        var maxVersion: Int64
    }

    /// Inserts the batch if, and only if, it continues the device's seqs (and the expected version holds).
    private func insertIfContinuing(_ batch: ArraySlice<Event>, account: UUID, device: UUID, expectedVersion: ExpectedVersion) async throws -> Head {
        let expected: Int64? = if case .exactly(let version) = expectedVersion { version } else { nil }
        let statement = AppendStatement(
            account: account, device: device, ids: batch.map(\.id), seqs: batch.map(\.seq), types: batch.map(\.type.rawValue),
            walls: batch.map(\.hlc.wallMillis), counters: batch.map { Int64($0.hlc.counter) }, bodies: batch.map(\.body.fieldsJSON),
            previousSeq: batch.first!.seq - 1, expectedVersion: expected)
        for try await head in try await client.execute(statement, logger: logger) {
            return head
        }
        throw StoreError.corruptRow("the append statement returned no head row")
    }

    /// The append as a prepared statement: every push runs it, and PostgreSQL then parses and
    /// plans it once per connection instead of once per push.
    struct AppendStatement: PostgresPreparedStatement {
        static let sql = """
            WITH head AS (
                SELECT (SELECT coalesce(max(stream_version), 0) FROM events WHERE account_id = $1) AS version,
                       (SELECT coalesce(max(seq), 0) FROM events WHERE account_id = $1 AND device_id = $2) AS last_seq
            ), inserted AS (
                INSERT INTO events (account_id, stream_version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body)
                SELECT $1, head.version + b.ord, $2, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb
                FROM head, unnest($3::uuid[], $4::int8[], $5::text[], $6::int8[], $7::int8[], $8::text[])
                     WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord)
                WHERE head.last_seq = $9 AND ($10::int8 IS NULL OR head.version = $10::int8)
                RETURNING position, stream_version
            )
            SELECT head.version, head.last_seq, (SELECT count(*) FROM inserted),
                   coalesce((SELECT max(position) FROM inserted), 0), coalesce((SELECT max(stream_version) FROM inserted), 0)
            FROM head
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .uuidArray, .int8Array, .textArray, .int8Array, .int8Array,
                                                           .textArray, .int8, .int8]

        var account: UUID
        var device: UUID
        var ids: [UUID]
        var seqs: [Int64]
        var types: [String]
        var walls: [Int64]
        var counters: [Int64]
        var bodies: [String]
        var previousSeq: Int64
        var expectedVersion: Int64?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 10)
            bindings.append(account)
            bindings.append(device)
            bindings.append(ids)
            bindings.append(seqs)
            bindings.append(types)
            bindings.append(walls)
            bindings.append(counters)
            bindings.append(bodies)
            bindings.append(previousSeq)
            bindings.append(expectedVersion)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Head {
            let (version, lastSeq, inserted, maxPosition, maxVersion) = try row.decode((Int64, Int64, Int64, Int64, Int64).self)
            return Head(version: version, lastSeq: lastSeq, inserted: Int(inserted), maxPosition: maxPosition, maxVersion: maxVersion)
        }
    }

    private func acceptedEvents(device: UUID, account: UUID, seqs: ClosedRange<Int64>) async throws -> [Int64: (id: UUID, position: Int64)] {
        let rows = try await client.query("""
            SELECT seq, event_id, position FROM events
            WHERE account_id = \(account) AND device_id = \(device) AND seq BETWEEN \(seqs.lowerBound) AND \(seqs.upperBound)
            """, logger: logger)
        var accepted: [Int64: (id: UUID, position: Int64)] = [:]
        for try await (seq, id, position) in rows.decode((Int64, UUID, Int64).self) {
            accepted[seq] = (id, position)
        }
        return accepted
    }

    /// Names the first event of the batch whose id the account already used for another event:
    /// another seq, or another device. Exact retries earlier in the batch (same device, seq and
    /// id) are not reuses.
    private func idReuse(in events: [Event], account: UUID, device: UUID) async throws -> AppendError {
        let rows = try await client.query(
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

    /// The greatest seq accepted from a device, 0 when none.
    public func lastAcceptedSeq(account: UUID, device: UUID) async throws -> Int64 {
        try await client.query(
            "SELECT coalesce(max(seq), 0) FROM events WHERE account_id = \(account) AND device_id = \(device)",
            logger: logger).decode(Int64.self).collectAll().first ?? 0
    }

    public func streamVersion(account: UUID) async throws -> Int64 {
        try await client.query(
            "SELECT coalesce(max(stream_version), 0) FROM events WHERE account_id = \(account)",
            logger: logger).decode(Int64.self).collectAll().first ?? 0
    }

    /// Up to `limit` events after `checkpoint`, in log order, never passing an event that a
    /// transaction still running could commit before the ones returned.
    public func readLog(after checkpoint: LogCheckpoint, limit: Int) async throws -> [RecordedEvent] {
        try await EventCoding.decode(try await committedEvents(EventCoding.columns, after: checkpoint, limit: limit))
    }

    /// `columns` of the next `limit` committed events after `checkpoint`, in log order, never
    /// past an event that may still commit below them (DESIGN §6). (The order must name
    /// `events.tx_id`: plain `tx_id` would be the int8 output column, which no index orders.)
    func committedEvents(_ columns: String, after checkpoint: LogCheckpoint, limit: Int) async throws -> PostgresRowSequence {
        try await client.query("""
            SELECT \(unescaped: columns) FROM events
            WHERE (tx_id, position) > (\(String(checkpoint.transactionID))::xid8, \(checkpoint.position))
              AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY events.tx_id, events.position
            LIMIT \(limit)
            """, logger: logger)
    }

    /// The events of one account in stream order, for replay and admin queries.
    public func readStream(account: UUID, after streamVersion: Int64, limit: Int) async throws -> [RecordedEvent] {
        let rows = try await client.query("""
            SELECT \(unescaped: EventCoding.columns) FROM events
            WHERE account_id = \(account) AND stream_version > \(streamVersion)
            ORDER BY stream_version
            LIMIT \(limit)
            """, logger: logger)
        return try await EventCoding.decode(rows)
    }
}
