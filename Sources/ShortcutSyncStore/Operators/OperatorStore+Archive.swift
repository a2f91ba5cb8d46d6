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
    /// or a device's seq already taken by another event.
    public func importAccount(_ account: AccountRecord, devices: [ArchivedDevice], events: [ArchivedEvent]) async throws -> ImportCounts {
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
                let fresh = try await newEvents(events, account: account.accountId, on: connection)
                counts.eventsAlreadyStored = events.count - fresh.count
                counts.events = try await insertEvents(fresh, account: account.accountId, after: head, on: connection)
                if counts.events > 0 {
                    head += Int64(counts.events)
                    try await moveHead(account.accountId, to: head, on: connection)
                }
                return counts
            }
        }
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

    /// The events the account does not hold yet; throws if one disagrees with a stored one.
    private func newEvents(_ events: [ArchivedEvent], account: UUID, on connection: PostgresConnection) async throws -> [ArchivedEvent] {
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
            "SELECT version FROM account_heads WHERE account_id = \(account) FOR UPDATE", logger: logger)
        guard let version = try await rows.decode(Int64.self).collectAll().first else {
            throw StoreError.corruptRow("the head of account \(account) vanished while it was imported")
        }
        return version
    }

    /// Moves the account's head past the imported events. Its folded version stays where it is
    /// (0 for a new account): the maintenance tasks fold the imported events, and until they have,
    /// the account's pushes are stored without being folded.
    private func moveHead(_ account: UUID, to version: Int64, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery(
            "UPDATE account_heads SET version = \(version) WHERE account_id = \(account)", logger: logger)
    }

    /// Appends events after the account's version `head`, in the given order, with their recorded
    /// times; returns how many. (Times go as seconds that `to_timestamp` rounds to whole
    /// microseconds, as they were read: a `Date` bound directly would be truncated, a microsecond
    /// off now and then.)
    private func insertEvents(_ events: [ArchivedEvent], account: UUID, after head: Int64, on connection: PostgresConnection) async throws -> Int {
        var inserted = 0
        for chunk in stride(from: 0, to: events.count, by: 5000).map({ events[$0..<min($0 + 5000, events.count)] }) {
            let bodies = chunk.map(\.event.body.fieldsJSON)
            let rows = try await connection.guardedQuery("""
                WITH inserted AS (
                    INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, recorded_at)
                    SELECT \(account), \(head + Int64(inserted)) + b.ord, b.device, b.seq, b.event_id, b.type, b.wall, b.counter,
                           b.body::jsonb, to_timestamp(b.recorded_at)
                    FROM unnest(\(chunk.map(\.deviceId))::uuid[], \(chunk.map(\.event.seq))::int8[], \(chunk.map(\.event.id))::uuid[],
                                      \(chunk.map(\.event.type.rawValue))::text[], \(chunk.map(\.event.hlc.wallMillis))::int8[],
                                      \(chunk.map { Int64($0.event.hlc.counter) })::int8[], \(bodies)::text[],
                                      \(chunk.map(\.recordedAt.timeIntervalSince1970))::float8[])
                         WITH ORDINALITY AS b(device, seq, event_id, type, wall, counter, body, recorded_at, ord)
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
