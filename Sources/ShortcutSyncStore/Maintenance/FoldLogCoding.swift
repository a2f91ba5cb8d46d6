import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How the fold's columns of an event are read: the few body fields the fold needs, extracted by
/// the server, so that no donation (most events) is decoded from JSON here: it brings its
/// shortcut, group, offset, eligibility and place as columns.
///
/// The fields that only the other events have (a voice shortcut's id, phrase and title, a
/// deletion's identifiers or a report's apps, a learning scope's name and device, a pause) come
/// in one column, a JSON array (`Extras`), null for a donation: each column is a cell PostgresNIO
/// makes and frees for every row, and the server's extraction of a field absent from a
/// donation's body costs as much as of one there (issue 68). The list is read here, not made an
/// array by the server: that was a subquery (`ARRAY(SELECT jsonb_array_elements_text(…))`),
/// which on Citus makes the account's read of its log a router plan instead of a fast-path
/// statement (issue 66, item 1).
struct FoldLogCoding: Sendable {
    static let columns = """
        version, account_id, device_id, seq, hlc_wall, hlc_counter,
        (CASE type WHEN 'donation' THEN 0 WHEN 'deletion' THEN 1 WHEN 'voiceShortcutAdded' THEN 2
                   WHEN 'voiceShortcutUpdated' THEN 3 WHEN 'voiceShortcutDeleted' THEN 4 WHEN 'appsReported' THEN 5
                   WHEN 'learningForgotten' THEN 7 WHEN 'learningPaused' THEN 8 ELSE 6 END)::int2,
        body->>'bundleId', body->>'identifier', body->>'groupIdentifier',
        (body->>'utcOffsetMinutes')::int4, coalesce((body->>'eligibleForPrediction')::bool, true), body->>'place',
        (CASE WHEN type <> 'donation' THEN jsonb_build_array(
            body->'voiceShortcutId', body->'phrase', body->'title',
            CASE type WHEN 'deletion' THEN body->'identifiers' WHEN 'appsReported' THEN body->'installed' END,
            body->'scope', body->'deviceId', body->'paused') END)::text
        """

    /// The fields of an event that is not a donation, as the last column holds them:
    /// `[voiceShortcutId, phrase, title, list, scope, deviceId, paused]`, each null where the
    /// body has none, read by the push's JSON parser (`JSONFlatArray`). Nil for anything else: a
    /// field of another kind (a number for a phrase, an id that is not a UUID, a list that is
    /// not one of strings).
    struct Extras: Equatable {
        var voiceId: UUID?, phrase: String?, title: String?, list: [String]?
        var scope: String?, scopeDevice: UUID?, paused: Bool?

        static func parse(_ text: String) -> Extras? {
            guard let fields = JSONFlatArray.elements(of: text), fields.count == 7 else { return nil }
            // Each field: its value, `.some(nil)` for JSON's null, nil for a value of another kind.
            func field<Value>(_ index: Int, _ value: (JSONFlatArray.Element) -> Value?) -> Value?? {
                if case .null = fields[index] { return .some(nil) }
                return value(fields[index]).map { .some($0) }
            }
            guard let voiceId = field(0, { $0.string.flatMap(UUID.init(uuidString:)) }), let phrase = field(1, \.string),
                  let title = field(2, \.string), let list = field(3, \.strings), let scope = field(4, \.string),
                  let scopeDevice = field(5, { $0.string.flatMap(UUID.init(uuidString:)) }), let paused = field(6, \.bool)
            else { return nil }
            return Extras(voiceId: voiceId, phrase: phrase, title: title, list: list, scope: scope, scopeDevice: scopeDevice, paused: paused)
        }
    }

    /// Every row of `rows`, read to the end.
    func entries(_ rows: PostgresRowSequence) async throws -> [FoldLogEntry] {
        var entries: [FoldLogEntry] = []
        for try await row in rows { entries.append(try entry(row)) }
        return entries
    }

    /// Decodes the cells one by one, each with its concrete type (a tuple decode of fifteen
    /// columns costs more than the fold of the event).
    func entry(_ row: PostgresRow) throws -> FoldLogEntry {
        var cells = CellReader(row)
        let version = try cells.next(Int64.self)
        let account = try cells.next(UUID.self)
        return try entry(version: version, account: account, rest: &cells)
    }

    /// As `entry(_:)`, but nil for an event of an account in `horizons` at or below its version
    /// there, whose other columns are not decoded.
    func entry(_ row: PostgresRow, after horizons: [UUID: Int64]) throws -> FoldLogEntry? {
        var cells = CellReader(row)
        let version = try cells.next(Int64.self)
        let account = try cells.next(UUID.self)
        if let horizon = horizons[account], version <= horizon { return nil }
        return try entry(version: version, account: account, rest: &cells)
    }

    /// The event whose version and account were read, from the rest of its cells.
    private func entry(version: Int64, account: UUID, rest cells: inout CellReader) throws -> FoldLogEntry {
        let device = try cells.next(UUID.self)
        let seq = try cells.next(Int64.self), wall = try cells.next(Int64.self), counter = try cells.next(Int64.self)
        let type = try cells.next(Int16.self)
        let bundleId = try cells.next(String?.self), identifier = try cells.next(String?.self), group = try cells.next(String?.self)
        let offset = try cells.next(Int32?.self), eligible = try cells.next(Bool.self), place = try cells.next(String?.self)
        let extras = try cells.next(String?.self).map { try Self.extras($0, version: version, account: account) } ?? Extras()
        let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
        // `place` is a donation's token, or the place a forget's scope names.
        let learning = extras.scope.flatMap {
            LearningScope(name: $0, deviceId: extras.scopeDevice, bundleId: bundleId, identifier: identifier, place: place)
        }
        guard let change = Self.change(type: type, bundleId: bundleId, identifier: identifier, group: group, extras: extras, learning: learning) else {
            throw StoreError.corruptRow("event \(version) of account \(account) (type \(type)) lacks a field its type needs")
        }
        // A donation eligible for prediction teaches the suggestions (DESIGN §3).
        let habit = type == 0 && eligible ? HabitDonation(deviceId: device, wallMillis: wall, utcOffsetMinutes: Int(offset ?? 0), placeToken: place) : nil
        return FoldLogEntry(accountId: account, event: FoldEvent(key: key, version: version, change: change, habit: habit))
    }

    /// The fields of an event that is not a donation (`Extras`); anything else there is a corrupt
    /// row. The server read them before as their types: its UUID and boolean casts took text that
    /// Swift's decoding of the pushed body never writes, and its array of a list refused only what
    /// was not an array, taking numbers as their text; no push stores any of these.
    private static func extras(_ json: String, version: Int64, account: UUID) throws -> Extras {
        guard let extras = Extras.parse(json) else {
            throw StoreError.corruptRow("event \(version) of account \(account) holds a field that is not of its kind")
        }
        return extras
    }

    private static func change(
        type: Int16, bundleId: String?, identifier: String?, group: String?, extras: Extras, learning: LearningScope?
    ) -> FoldEvent.Change? {
        let (voiceId, phrase, title, list) = (extras.voiceId, extras.phrase, extras.title, extras.list)
        switch type {
        case 0:
            guard let bundleId, let identifier else { return nil }
            return .donation(ShortcutID(bundleId: bundleId, identifier: identifier), group: group ?? "")
        case 1:
            guard let bundleId else { return nil }
            let selector: DeletionSelector = if let list { .identifiers(list) } else if let group { .groupIdentifier(group) } else { .all }
            return .deletion(Deletion(bundleId: bundleId, selector: selector))
        case 2:
            guard let voiceId, let phrase, let bundleId, let identifier, let title else { return nil }
            return .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: voiceId, phrase: phrase, bundleId: bundleId, identifier: identifier, title: title))
        case 3:
            guard let voiceId, let phrase else { return nil }
            return .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: voiceId, phrase: phrase))
        case 4:
            return voiceId.map { .voiceShortcutDeleted($0) }
        case 5:
            return .appsReported(Set(list ?? []))
        case 6:
            return .signedOut
        case 7:
            return learning.map { .learningForgotten($0) }
        case 8:
            guard let learning, let paused = extras.paused else { return nil }
            return .learningPaused(learning, paused: paused)
        default:
            return nil
        }
    }
}
