import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

extension OperatorStore {
    /// The account with its token hash, nil if there is none.
    public func accountRecord(_ account: UUID) async throws -> AccountRecord? {
        let rows = try await client.query(
            "SELECT account_id, created_at, token_hash FROM accounts WHERE account_id = \(account)", logger: logger)
        return try await rows.decode((UUID, Date, ByteBuffer).self).collectAll().first.map {
            AccountRecord(accountId: $0.0, createdAt: $0.1, tokenHash: Array(buffer: $0.2))
        }
    }

    /// The account's devices with their token hashes, oldest first.
    public func archivedDevices(account: UUID) async throws -> [ArchivedDevice] {
        let rows = try await client.query("""
            SELECT device_id, account_id, name, platform, created_at, revoked_at, token_hash
            FROM devices WHERE account_id = \(account) ORDER BY created_at, device_id
            """, logger: logger)
        return try await rows.decode((UUID, UUID, String, String, Date, Date?, ByteBuffer?).self).collectAll().map {
            ArchivedDevice(
                record: DeviceRecord(deviceId: $0.0, accountId: $0.1, name: $0.2, platform: $0.3, createdAt: $0.4, revokedAt: $0.5),
                tokenHash: $0.6.map { Array(buffer: $0) })
        }
    }

    /// Stores an exported account in one transaction, adding only what the database lacks: the
    /// same file twice adds nothing. Throws `ImportConflict` (and stores nothing) when the file
    /// and the database disagree: an account, device or event id that is stored differently,
    /// a device's seq already taken by another event, or, in an account compacted here, an event
    /// the log lacks that is not later than its horizon (it may be one compacted away).
    ///
    /// A compacted account's file (`snapshot`) goes into a database without the account's
    /// history whole: its snapshot's rows, in `snapshot.*` and as its live rows, and its events
    /// at their versions, its head folded to the horizon (the maintenance tasks fold the events
    /// after it, as after any import). Into the same history (the same horizon and snapshot) it
    /// adds the events after the horizon the database lacks, as any import does; into another
    /// (the account stored uncompacted, or with another horizon or snapshot) it throws
    /// `ImportedHistoryConflict`.
    public func importAccount(_ account: AccountRecord, devices: [ArchivedDevice], events: [ArchivedEvent],
                              snapshot: ArchivedSnapshot? = nil) async throws -> ImportCounts {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                var counts = ImportCounts()
                // One import of an account at a time: the second waits, then finds the first's rows.
                try await connection.guardedQuery("SELECT pg_advisory_xact_lock(hashtext(\(account.accountId.uuidString)))", logger: logger)
                counts.accounts = try await insertAccount(account, on: connection)
                for device in devices {
                    counts.devices += try await insertDevice(device, on: connection)
                }
                // The account's head, locked: its pushes wait until the import commits.
                var head = try await lockHead(account.accountId, on: connection)
                let horizon = try await horizon(of: account.accountId, on: connection)
                if let snapshot {
                    if head == 0 && horizon == nil {
                        return try await importCompacted(account.accountId, snapshot: snapshot, events: events, counts: counts, on: connection)
                    }
                    guard horizon == snapshot.horizon, try await holdsSnapshot(snapshot, account: account.accountId, on: connection) else {
                        throw ImportedHistoryConflict(account: account.accountId, line: snapshot.line, file: snapshot.horizon,
                                                      stored: horizon, storedVersion: head)
                    }
                }
                let fresh = try await newEvents(events, account: account.accountId, horizon: horizon, on: connection)
                counts.eventsAlreadyStored = events.count - fresh.count
                // The imported events are a push of their own to the history (migration 0027).
                let history = PostgresEventStore.newHistory()
                counts.events = try await insertEvents(fresh, account: account.accountId,
                                                       versions: fresh.indices.map { head + 1 + Int64($0) }, history: history,
                                                       on: connection)
                if counts.events > 0 {
                    head += Int64(counts.events)
                    try await moveHead(account.accountId, to: head, history: history, on: connection)
                }
                return counts
            }
        }
    }

    /// A compacted account's file into a database without its history: the snapshot, the events
    /// at their versions, the head at the greater of the horizon and the last event, folded to the horizon.
    private func importCompacted(_ account: UUID, snapshot: ArchivedSnapshot, events: [ArchivedEvent], counts: ImportCounts,
                                 on connection: PostgresConnection) async throws -> ImportCounts {
        var counts = counts
        counts.snapshotRows = try await insertSnapshot(snapshot, account: account, on: connection)
        try await RetryFingerprints.insert(snapshot.retryFingerprints, account: account, on: connection, logger: logger)
        let versions = events.map { $0.version ?? 0 }
        // The import is a history of its own (migration 0027): no cursor of the database it came from goes on here.
        let history = PostgresEventStore.newHistory()
        counts.events = try await insertEvents(events, account: account, versions: versions, history: history, on: connection)
        let version = max(snapshot.horizon.version, versions.max() ?? 0)
        try await connection.guardedQuery("""
            UPDATE account_heads SET version = \(version), folded_version = \(snapshot.horizon.version), history = \(history)
            WHERE account_id = \(account)
            """, logger: logger)
        return counts
    }

    /// Adds the account unless it is stored; returns 1 when it was added. Throws when it is
    /// stored with another token.
    private func insertAccount(_ account: AccountRecord, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.guardedQuery("""
            WITH added AS (
                INSERT INTO accounts (account_id, token_hash, created_at)
                VALUES (\(account.accountId), \(ByteBuffer(bytes: account.tokenHash)), to_timestamp(\(account.createdAt.timeIntervalSince1970)))
                ON CONFLICT (account_id) DO NOTHING RETURNING 1
            )
            SELECT (SELECT count(*) FROM added), (SELECT token_hash = \(ByteBuffer(bytes: account.tokenHash)) FROM accounts WHERE account_id = \(account.accountId))
            """, logger: logger)
        for try await (added, sameToken) in rows.decode((Int64, Bool?).self) {
            if added == 0 && sameToken != true {
                throw ImportConflict(line: 1, reason: "account \(account.accountId) is already stored with another token")
            }
            return Int(added)
        }
        return 0
    }

    /// Adds the device unless it is stored; returns 1 when it was added. Throws when it is
    /// stored for another account.
    private func insertDevice(_ device: ArchivedDevice, on connection: PostgresConnection) async throws -> Int {
        let record = device.record
        // Cross-account: a device id is unique over all accounts, so which account holds it is read.
        let rows = try await connection.guardedQuery("""
            WITH added AS (
                INSERT INTO devices (device_id, account_id, name, platform, token_hash, created_at, revoked_at)
                VALUES (\(record.deviceId), \(record.accountId), \(record.name), \(record.platform),
                        \(device.tokenHash.map { ByteBuffer(bytes: $0) }), to_timestamp(\(record.createdAt.timeIntervalSince1970)),
                        to_timestamp(\(record.revokedAt?.timeIntervalSince1970)))
                ON CONFLICT (device_id) DO NOTHING RETURNING 1
            )
            SELECT (SELECT count(*) FROM added), (SELECT account_id FROM devices WHERE device_id = \(record.deviceId))
            """, logger: logger)
        for try await (added, owner) in rows.decode((Int64, UUID?).self) {
            if added == 0 && owner != record.accountId {
                throw ImportConflict(line: device.line, reason: "device \(record.deviceId) is already stored for another account")
            }
            return Int(added)
        }
        return 0
    }

    /// The events the account does not hold yet; throws if one disagrees with a stored one, or,
    /// when the account is compacted here, if one is not later than its horizon.
    private func newEvents(_ events: [ArchivedEvent], account: UUID, horizon: AccountHorizon?,
                           on connection: PostgresConnection) async throws -> [ArchivedEvent] {
        let rows = try await connection.guardedQuery(
            "SELECT event_id, device_id, seq FROM events WHERE account_id = \(account)", logger: logger)
        var storedByID: [UUID: (device: UUID, seq: Int64)] = [:]
        var takenSeqs: Set<DeviceSeq> = []
        for try await (id, device, seq) in rows.decode((UUID, UUID, Int64).self) {
            storedByID[id] = (device, seq)
            takenSeqs.insert(DeviceSeq(device: device, seq: seq))
        }
        var fresh: [ArchivedEvent] = []
        for archived in events {
            if let stored = storedByID[archived.event.id] {
                guard stored.device == archived.deviceId, stored.seq == archived.event.seq else {
                    throw ImportConflict(line: archived.line, reason: "event \(archived.event.id) is already stored as seq \(stored.seq) of device \(stored.device)")
                }
                continue
            }
            if let horizon, EventKey(hlc: archived.event.hlc, deviceId: archived.deviceId, seq: archived.event.seq) <= horizon.key {
                // Every event this log compacted away is at or below the horizon's key: this one may be among them.
                throw ImportConflict(line: archived.line, reason: "event \(archived.event.id) is not in the log here and is not later than its horizon "
                    + "(the account is compacted through version \(horizon.version) here): it may be one compacted away, and would count twice")
            }
            let slot = DeviceSeq(device: archived.deviceId, seq: archived.event.seq)
            guard takenSeqs.insert(slot).inserted else {
                throw ImportConflict(line: archived.line, reason: "device \(archived.deviceId) already has another event with seq \(archived.event.seq)")
            }
            storedByID[archived.event.id] = (archived.deviceId, archived.event.seq)
            fresh.append(archived)
        }
        return fresh
    }

    /// A device's seq: two events must not share one.
    private struct DeviceSeq: Hashable {
        var device: UUID
        var seq: Int64
    }

    /// Makes the account's head row when it has none (its version that of its last event, none
    /// of it folded) and locks it until the transaction ends; returns the account's version.
    private func lockHead(_ account: UUID, on connection: PostgresConnection) async throws -> Int64 {
        try await connection.guardedQuery("""
            INSERT INTO account_heads (account_id, version, folded_version)
            SELECT \(account), coalesce(max(version), 0), 0 FROM events WHERE account_id = \(account)
            ON CONFLICT (account_id) DO NOTHING
            """, logger: logger)
        let rows = try await connection.guardedQuery(
            "SELECT version FROM account_heads WHERE account_id = \(account) FOR NO KEY UPDATE", logger: logger)
        guard let version = try await rows.decode(Int64.self).collectAll().first else {
            throw StoreError.corruptRow("the head of account \(account) vanished while it was imported")
        }
        return version
    }

    /// Moves the account's head past the imported events. Its folded version stays where it is
    /// (0 for a new account): the maintenance tasks fold the imported events, and until they have,
    /// the account's pushes are stored without being folded.
    private func moveHead(_ account: UUID, to version: Int64, history: Int64, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery(
            "UPDATE account_heads SET version = \(version), history = \(history) WHERE account_id = \(account)", logger: logger)
    }

    /// Stores events at `versions` (one each, in the same order), with their recorded times and the
    /// import's history value; returns how many. (Times go as seconds that `to_timestamp` rounds to whole microseconds, as
    /// they were read: a `Date` bound directly would be truncated, a microsecond off now and then.)
    private func insertEvents(_ events: [ArchivedEvent], account: UUID, versions: [Int64], history: Int64,
                              on connection: PostgresConnection) async throws -> Int {
        var inserted = 0
        for range in stride(from: 0, to: events.count, by: 5000).map({ $0..<min($0 + 5000, events.count) }) {
            let chunk = events[range]
            let bodies = chunk.map(\.event.body.fieldsJSON)
            let rows = try await connection.guardedQuery("""
                WITH inserted AS (
                    INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, recorded_at,
                                        history)
                    SELECT \(account), b.version, b.device, b.seq, b.event_id, b.type, b.wall, b.counter,
                           b.body::jsonb, to_timestamp(b.recorded_at), \(history)
                    FROM unnest(\(Array(versions[range]))::int8[], \(chunk.map(\.deviceId))::uuid[], \(chunk.map(\.event.seq))::int8[],
                                      \(chunk.map(\.event.id))::uuid[], \(chunk.map(\.event.type.rawValue))::text[],
                                      \(chunk.map(\.event.hlc.wallMillis))::int8[], \(chunk.map { Int64($0.event.hlc.counter) })::int8[],
                                      \(bodies)::text[], \(chunk.map(\.recordedAt.timeIntervalSince1970))::float8[])
                         WITH ORDINALITY AS b(version, device, seq, event_id, type, wall, counter, body, recorded_at, ord)
                    ORDER BY b.ord
                    RETURNING 1
                )
                SELECT count(*) FROM inserted
                """, logger: logger)
            inserted += Int(try await rows.decode(Int64.self).collectAll().first ?? 0)
        }
        return inserted
    }
}
