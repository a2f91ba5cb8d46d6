import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One event of the log as the fold reads it: what it changes, without the attributes of a
/// donation (the projections copy those from the log, by position, for latest donations only).
public struct FoldLogEntry: Sendable, Hashable {
    public var accountId: UUID
    public var checkpoint: LogCheckpoint
    public var event: FoldEvent

    public init(accountId: UUID, checkpoint: LogCheckpoint, event: FoldEvent) {
        self.accountId = accountId
        self.checkpoint = checkpoint
        self.event = event
    }

    /// The same event, read whole.
    public init(_ recorded: RecordedEvent) {
        self.init(accountId: recorded.accountId, checkpoint: recorded.checkpoint,
                  event: FoldEvent(recorded.accepted, position: recorded.position))
    }
}

extension PostgresEventStore {
    /// Like `readLog`, in the fold's reading: the next committed events after `checkpoint`, in
    /// log order, never past an event that may still commit below them.
    public func readFoldLog(after checkpoint: LogCheckpoint, limit: Int) async throws -> [FoldLogEntry] {
        let rows = try await client.query("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE (tx_id, position) > (\(String(checkpoint.transactionID))::xid8, \(checkpoint.position))
              AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY tx_id, position
            LIMIT \(limit)
            """, logger: logger)
        var entries: [FoldLogEntry] = []
        entries.reserveCapacity(limit)
        let coding = FoldLogCoding()
        for try await row in rows.decode(FoldLogCoding.Row.self) {
            entries.append(try coding.entry(row))
        }
        return entries
    }

    /// The log's horizon now: every event of a transaction below it has committed, and no event
    /// will ever commit below it. With the last event below it, the checkpoint a reader has once
    /// it has read all of them.
    public func horizon(on connection: PostgresConnection) async throws -> (transactionID: UInt64, checkpoint: LogCheckpoint) {
        let rows = try await connection.guardedQuery("""
            SELECT h.xmin::text::int8, coalesce(e.tx_id::text::int8, 0), coalesce(e.position, 0)
            FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h
            LEFT JOIN LATERAL (SELECT tx_id, position FROM events WHERE tx_id < h.xmin ORDER BY tx_id DESC, position DESC LIMIT 1) e ON true
            """, logger: logger)
        for try await (xmin, txid, position) in rows.decode((Int64, Int64, Int64).self) {
            return (UInt64(xmin), LogCheckpoint(transactionID: UInt64(txid), position: position))
        }
        throw StoreError.corruptRow("the log's horizon could not be read")
    }

    /// Every event below the horizon `transactionID`, account after account (each in its stream
    /// order), read as a stream on `connection`: for a rebuild, which folds one account at a time.
    public func foldLogByAccount(
        below transactionID: UInt64, on connection: PostgresConnection
    ) async throws -> some AsyncSequence<FoldLogEntry, any Error> {
        let rows = try await connection.guardedQuery("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE tx_id < \(String(transactionID))::xid8
            ORDER BY account_id, stream_version
            """, logger: logger)
        let coding = FoldLogCoding()
        return rows.decode(FoldLogCoding.Row.self).map { try coding.entry($0) }
    }
}

/// How the fold's columns of an event are read. Donations, most of the log, come as four short
/// columns; other events bring their body, decoded here.
struct FoldLogCoding: Sendable {
    typealias Row = (Int64, Int64, UUID, UUID, Int64, Int64, Int64, String, String?, String?, String?, String?)

    static let columns = """
        position, tx_id::text::int8, account_id, device_id, seq, hlc_wall, hlc_counter, type,
        CASE WHEN type = 'donation' THEN body->>'bundleId' END,
        CASE WHEN type = 'donation' THEN body->>'identifier' END,
        CASE WHEN type = 'donation' THEN body->>'groupIdentifier' END,
        CASE WHEN type <> 'donation' THEN body::text END
        """

    func entry(_ row: Row) throws -> FoldLogEntry {
        let (position, txid, account, device, seq, wall, counter, type, bundleId, identifier, group, body) = row
        let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
        let change: FoldEvent.Change
        do {
            change = try Self.change(type: type, bundleId: bundleId, identifier: identifier, group: group, body: body)
        } catch {
            throw StoreError.corruptRow("event at position \(position): \(error)")
        }
        return FoldLogEntry(accountId: account, checkpoint: LogCheckpoint(transactionID: UInt64(txid), position: position),
                            event: FoldEvent(key: key, position: position, change: change))
    }

    private static func change(type: String, bundleId: String?, identifier: String?, group: String?, body: String?) throws -> FoldEvent.Change {
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard let body else { throw StoreError.corruptRow("the event has no body") }
            return try JSONDecoder().decode(type, from: Data(body.utf8))
        }
        switch EventType(rawValue: type) {
        case .donation:
            guard let bundleId, let identifier else { throw StoreError.corruptRow("a donation without bundleId or identifier") }
            return .donation(ShortcutID(bundleId: bundleId, identifier: identifier), group: group ?? "")
        case .deletion: return .deletion(try decode(Deletion.self))
        case .voiceShortcutAdded: return .voiceShortcutAdded(try decode(VoiceShortcutAdded.self))
        case .voiceShortcutUpdated: return .voiceShortcutUpdated(try decode(VoiceShortcutUpdated.self))
        case .voiceShortcutDeleted: return .voiceShortcutDeleted(try decode(VoiceShortcutDeleted.self).voiceShortcutId)
        case .appsReported: return .appsReported(Set(try decode(AppsReported.self).installed))
        case nil: throw StoreError.corruptRow("unknown event type \(type)")
        }
    }
}
