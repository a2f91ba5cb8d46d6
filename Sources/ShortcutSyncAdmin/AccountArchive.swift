import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// The export format (`admin export`, read by `admin import`): NDJSON, one JSON object per line,
/// each with a `kind`. The first line is the account, then its devices, then (for a compacted
/// account, issue 58) its horizon, its snapshot's rows and what recognises a retry of each event
/// compacted away (`retry`, migration 0029), then its events in the
/// account's version order, then whether the suggestions' learning is paused and what was
/// forgotten (`learning`), then what the suggestions learned of each shortcut (`learned`); these
/// last two are for the person to see: an import learns them again from the events. The file is self-contained. Times are ISO 8601 in UTC with microseconds; token hashes
/// are lowercase hex (the tokens themselves are never stored), so devices keep working after an
/// import. docs/operating.md gives the fields.
public enum AccountArchive {
    public static let formatVersion = 1

    struct AccountLine: Codable {
        var kind = "account"
        var formatVersion: Int
        var accountId: UUID
        var createdAt: String
        var tokenHash: String
    }

    struct DeviceLine: Codable {
        var kind = "device"
        var deviceId: UUID
        var name: String
        var platform: String
        var createdAt: String
        var revokedAt: String?
        var tokenHash: String?
    }

    struct EventLine: Codable {
        var kind = "event"
        /// Its version in the exporting database's account log (informative: an import appends
        /// the events in the file's order, after the account's version there).
        var version: Int64?
        /// Where the exporting database recorded it among all its accounts' events (informative).
        var position: Int64
        var deviceId: UUID
        var recordedAt: String
        var event: Event
    }

    /// A compacted account's horizon (DESIGN §3, "Across the horizon"): its events up to `version`
    /// were compacted into its snapshot (the `snapshot` lines after this one), `key` the greatest
    /// key among them; `time` is the key's clock, for a person to read. The events that follow
    /// are those the log kept: at or below the horizon, each donation group's latest donation and
    /// each device's last event (folded by nothing); after it, all of them.
    struct HorizonLine: Codable {
        struct Key: Codable {
            var hlc: HLCTimestamp
            var deviceId: UUID
            var seq: Int64
        }

        var kind = "horizon"
        var version: Int64
        var key: Key
        var time: String
    }

    /// One row of the account's snapshot: `table` (schema `snapshot`) and the row, every column
    /// as PostgreSQL writes it in JSON (`row_to_json`). Written by hand around the database's
    /// text, so that the row reaches the file, and back, as PostgreSQL wrote it; read here only
    /// to be checked.
    struct SnapshotLine: Decodable {
        var kind: String
        var table: String
        var row: [String: JSONValue]

        /// The line of `json`, a row of `table` (one of `ArchivedSnapshot.tables`: a plain name, no escape needed).
        static func text(table: String, row json: String) -> String {
            #"{"kind":"snapshot","row":"# + json + #","table":""# + table + #""}"#
        }
    }

    /// The fingerprints of a device's events compacted away, from `firstSeq` on
    /// (`RetryFingerprints`): lowercase hex, two bytes (four digits) a seq.
    struct RetryLine: Codable {
        var kind = "retry"
        var deviceId: UUID
        var firstSeq: Int64
        var fingerprints: String
    }

    /// What the account learned of one shortcut: per device, its donations and the weight of
    /// each hour of the person's week, decayed to `at` (each halved every three weeks; an
    /// export decays to the time of the account's latest event, so that it depends on the log alone).
    struct LearnedLine: Codable {
        var kind = "learned"
        var bundleId: String
        var identifier: String
        var at: String
        var devices: [LearnedHabits.Device]
    }

    /// The learning rules as a person reads them: whether learning is paused for the account and
    /// for each device, and each forget, with the clock of its event (what it forgot is the
    /// donations of its scope made before that).
    struct LearningLine: Codable {
        struct Device: Codable {
            var deviceId: UUID
            var learning: String
        }

        struct Forget: Codable {
            var scope: String
            var deviceId: UUID?
            var bundleId: String?
            var identifier: String?
            var place: String?
            var before: String
        }

        var kind = "learning"
        var account: String
        var devices: [Device]
        var forgotten: [Forget]
        var signedOutDevices: [UUID]

        init(_ rules: LearningRules, devices: [UUID]) {
            account = rules.isPaused(.account) ? "paused" : "on"
            self.devices = devices.map { Device(deviceId: $0, learning: rules.isPaused(.device($0)) ? "paused" : "on") }
            forgotten = rules.forgotten.sorted { $0.key.isStoredBefore($1.key) }.map { scope, key in
                var forget = Forget(scope: scope.name, before: ISO8601.format(Date(timeIntervalSince1970: Double(key.hlc.wallMillis) / 1000)))
                switch scope {
                case .account: break
                case .device(let id): forget.deviceId = id
                case .shortcut(let id):
                    forget.bundleId = id.bundleId
                    forget.identifier = id.identifier
                case .place(let slot): forget.place = PlaceToken.prefix(ofSlot: slot)
                }
                return forget
            }
            signedOutDevices = rules.signedOut.sorted { $0.uuidString < $1.uuidString }
        }
    }

    private struct Kind: Decodable {
        var kind: String
    }

    /// The lines of an export, each without its line break.
    public static func lines(account: AccountRecord, devices: [ArchivedDevice], events: [RecordedEvent],
                             horizon: AccountHorizon? = nil, snapshotRows: [(table: String, json: String)] = [],
                             retryFingerprints: [RetryFingerprints] = [],
                             learning: LearningRules = LearningRules(),
                             learned: [(shortcut: ShortcutID, habits: ShortcutHabits)] = [], at: Date) throws -> [String] {
        var lines = [try encode(AccountLine(formatVersion: formatVersion, accountId: account.accountId,
                                            createdAt: ISO8601.format(account.createdAt), tokenHash: Hex.encode(account.tokenHash)))]
        for device in devices {
            let record = device.record
            lines.append(try encode(DeviceLine(deviceId: record.deviceId, name: record.name, platform: record.platform,
                                               createdAt: ISO8601.format(record.createdAt), revokedAt: record.revokedAt.map(ISO8601.format),
                                               tokenHash: device.tokenHash.map(Hex.encode))))
        }
        if let horizon {
            let key = horizon.key
            lines.append(try encode(HorizonLine(version: horizon.version, key: .init(hlc: key.hlc, deviceId: key.deviceId, seq: key.seq),
                                                time: ISO8601.format(Date(timeIntervalSince1970: Double(key.hlc.wallMillis) / 1000)))))
            for row in snapshotRows { lines.append(SnapshotLine.text(table: row.table, row: row.json)) }
            for row in retryFingerprints {
                lines.append(try encode(RetryLine(deviceId: row.deviceId, firstSeq: row.firstSeq, fingerprints: Hex.encode(row.fingerprints))))
            }
        }
        for event in events {
            lines.append(try encode(EventLine(version: event.version, position: event.position, deviceId: event.deviceId,
                                              recordedAt: ISO8601.format(event.recordedAt), event: event.event)))
        }
        lines.append(try encode(LearningLine(learning, devices: devices.map(\.record.deviceId))))
        let millis = Int64((at.timeIntervalSince1970 * 1000).rounded())
        for (shortcut, habits) in learned {
            let picture = LearnedHabits(habits, atMillis: millis)
            guard !picture.devices.isEmpty else { continue }
            lines.append(try encode(LearnedLine(bundleId: shortcut.bundleId, identifier: shortcut.identifier, at: ISO8601.format(at),
                                                devices: picture.devices)))
        }
        return lines
    }

    private static func encode(_ line: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(line), as: UTF8.self)
    }

    /// An export read back, every line checked.
    public struct Contents: Sendable {
        public var account: AccountRecord
        public var devices: [ArchivedDevice]
        public var events: [ArchivedEvent]
        /// A compacted account's horizon and snapshot; nil for an account never compacted.
        public var snapshot: ArchivedSnapshot?
    }

    /// A line that cannot be imported; nothing of the file is stored.
    public struct LineError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// Reads an export: the account first, then devices, then a compacted account's horizon and
    /// snapshot rows, then events of those devices, each event valid by DESIGN §2 (a compacted
    /// account's each with its version, in order, those after the horizon later than it). Empty
    /// lines are skipped. Throws the first `LineError`.
    public static func read(_ lines: some Sequence<Substring>) throws -> Contents {
        let decoder = JSONDecoder()
        let validator = EventValidator(nowMillis: Int64(Date().timeIntervalSince1970 * 1000))
        var account: AccountRecord?
        var devices: [ArchivedDevice] = []
        var deviceIds: Set<UUID> = []
        var events: [ArchivedEvent] = []
        var seenEvents: Set<UUID> = []
        var snapshot: ArchivedSnapshot?
        // Each device's greatest seq of a retry line so far.
        var retryEnds: [UUID: Int64] = [:]
        var number = 0
        for text in lines {
            number += 1
            let line = number
            func fail(_ reason: String) -> LineError { LineError(line: line, reason: reason) }
            func decode<Line: Decodable>(_ type: Line.Type) throws -> Line {
                do {
                    return try decoder.decode(type, from: Data(text.utf8))
                } catch let error as DecodingError {
                    throw fail("not a valid \(String(describing: type).replacingOccurrences(of: "Line", with: "").lowercased()) line: \(error.summary)")
                }
            }
            func time(_ text: String, _ field: String) throws -> Date {
                guard let date = ISO8601.parse(text) else { throw fail("\(field) is not an ISO 8601 time: \(text)") }
                return date
            }
            func hex(_ text: String, _ field: String) throws -> [UInt8] {
                guard let bytes = Hex.decode(text), bytes.count == 32 else { throw fail("\(field) is not 64 hex digits") }
                return bytes
            }

            if text.allSatisfy(\.isWhitespace) { continue }
            let kind: String
            do {
                kind = try decoder.decode(Kind.self, from: Data(text.utf8)).kind
            } catch {
                throw fail("not a JSON object with a \"kind\"")
            }
            switch kind {
            case "account":
                guard account == nil, devices.isEmpty, events.isEmpty, snapshot == nil else { throw fail("the account line must come first, and once") }
                let decoded = try decode(AccountLine.self)
                guard decoded.formatVersion == formatVersion else {
                    throw fail("format version \(decoded.formatVersion) is not supported (this version reads \(formatVersion))")
                }
                account = AccountRecord(accountId: decoded.accountId, createdAt: try time(decoded.createdAt, "createdAt"),
                                        tokenHash: try hex(decoded.tokenHash, "tokenHash"))
            case "device":
                guard let account else { throw fail("a device before the account line") }
                guard events.isEmpty, snapshot == nil else { throw fail("a device after the events or the horizon: devices come before them") }
                let decoded = try decode(DeviceLine.self)
                guard deviceIds.insert(decoded.deviceId).inserted else { throw fail("device \(decoded.deviceId.lowercased) is listed twice") }
                guard (decoded.revokedAt == nil) != (decoded.tokenHash == nil) else {
                    throw fail("a device has either a tokenHash (signed in) or a revokedAt (signed out)")
                }
                devices.append(ArchivedDevice(
                    record: DeviceRecord(deviceId: decoded.deviceId, accountId: account.accountId, name: decoded.name,
                                         platform: decoded.platform, createdAt: try time(decoded.createdAt, "createdAt"),
                                         revokedAt: try decoded.revokedAt.map { try time($0, "revokedAt") }),
                    tokenHash: try decoded.tokenHash.map { try hex($0, "tokenHash") }, line: line))
            case "horizon":
                guard account != nil else { throw fail("a horizon before the account line") }
                guard snapshot == nil, events.isEmpty else { throw fail("the horizon comes once, before the snapshot and the events") }
                let decoded = try decode(HorizonLine.self)
                let horizon = AccountHorizon(version: decoded.version, key: EventKey(
                    hlc: decoded.key.hlc, deviceId: decoded.key.deviceId, seq: decoded.key.seq))
                guard decoded.key.seq > 0, horizon.isWithinLimits else {
                    throw fail("the horizon's version must be 1 to \(Limits.storedCountRange.upperBound), its clock and seq those of an event")
                }
                snapshot = ArchivedSnapshot(horizon: horizon, line: line, rows: [])
            case "snapshot":
                guard let account, snapshot != nil else { throw fail("a snapshot row before the horizon line") }
                guard events.isEmpty else { throw fail("a snapshot row after the events: the snapshot comes before them") }
                let decoded = try decode(SnapshotLine.self)
                guard ArchivedSnapshot.tables.contains(decoded.table) else {
                    throw fail("unknown snapshot table \"\(decoded.table)\" (\(ArchivedSnapshot.tables.joined(separator: ", ")))")
                }
                guard case .string(let owner)? = decoded.row["account_id"], UUID(uuidString: owner) == account.accountId else {
                    throw fail("the snapshot row's account_id is not the account's, \(account.accountId.lowercased)")
                }
                snapshot?.rows.append(ArchivedSnapshot.Row(table: decoded.table, text: String(text), columns: Set(decoded.row.keys), line: line))
            case "retry":
                guard snapshot != nil else { throw fail("a retry line before the horizon line") }
                guard events.isEmpty else { throw fail("a retry line after the events: it comes before them") }
                let decoded = try decode(RetryLine.self)
                guard deviceIds.contains(decoded.deviceId) else {
                    throw fail("the retry line's device \(decoded.deviceId.lowercased) is not listed before it")
                }
                let row = RetryFingerprints(deviceId: decoded.deviceId, firstSeq: decoded.firstSeq, fingerprints: Hex.decode(decoded.fingerprints) ?? [])
                guard let seqs = row.seqs else {
                    throw fail("a retry line's fingerprints are 4 to \(RetryFingerprints.maximumSeqs * 4) hex digits, four a seq, "
                        + "from a firstSeq of 1 or more, every seq below \(Limits.seqRange.upperBound)")
                }
                // A device's lines in the order of their seqs, as an export writes them: each after the one before.
                if let before = retryEnds[row.deviceId], seqs.lowerBound <= before {
                    throw fail("a device's retry lines come in the order of their seqs, none overlapping: seq \(seqs.lowerBound) follows \(before)")
                }
                retryEnds[row.deviceId] = seqs.upperBound
                snapshot?.retryFingerprints.append(row)
            case "event":
                guard account != nil else { throw fail("an event before the account line") }
                let decoded = try decode(EventLine.self)
                guard deviceIds.contains(decoded.deviceId) else {
                    throw fail("the event's device \(decoded.deviceId.lowercased) is not listed before it")
                }
                let violations = validator.violations(of: decoded.event)
                guard violations.isEmpty else {
                    throw fail("invalid event: " + violations.map { "/event\($0.pointer): \($0.detail)" }.joined(separator: "; "))
                }
                guard seenEvents.insert(decoded.event.id).inserted else { throw fail("event \(decoded.event.id.lowercased) is listed twice") }
                if let horizon = snapshot?.horizon {
                    // A compacted account's events keep their versions: its snapshot's rows name them.
                    guard let version = decoded.version, version > (events.last?.version ?? 0) else {
                        throw fail("an event of a compacted account needs its version, greater than the event's before it")
                    }
                    guard version <= horizon.version || EventKey(hlc: decoded.event.hlc, deviceId: decoded.deviceId, seq: decoded.event.seq) > horizon.key else {
                        throw fail("the event at version \(version), after the horizon, is not later than the horizon's key")
                    }
                }
                events.append(ArchivedEvent(line: line, deviceId: decoded.deviceId, recordedAt: try time(decoded.recordedAt, "recordedAt"),
                                            event: decoded.event, version: decoded.version))
            case "learned":
                // Derived from the events: the import folds them and learns it again.
                guard account != nil else { throw fail("a learned line before the account line") }
                _ = try decode(LearnedLine.self)
            case "learning":
                // Derived from the events too.
                guard account != nil else { throw fail("a learning line before the account line") }
                _ = try decode(LearningLine.self)
            default:
                throw fail("unknown kind \"\(kind)\" (account, device, horizon, snapshot, retry, event, learning or learned)")
            }
        }
        guard let account else { throw LineError(line: max(number, 1), reason: "no account line: the file is empty or not an export") }
        if let snapshot, snapshot.rows.count(where: { $0.table == "projection_accounts" }) != 1 {
            throw LineError(line: snapshot.line, reason: "a compacted account's snapshot has one projection_accounts row, this file \(snapshot.rows.count(where: { $0.table == "projection_accounts" }))")
        }
        return Contents(account: account, devices: devices, events: events, snapshot: snapshot)
    }
}

extension DecodingError {
    /// Where and what, in a few words.
    var summary: String {
        func path(_ context: Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "\($0)" } ?? $0.stringValue }.joined(separator: "/")
            return path.isEmpty ? "" : "/\(path): "
        }
        switch self {
        case .keyNotFound(let key, let context): return "\(path(context))\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context))\(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
