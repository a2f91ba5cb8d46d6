import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How the fold's columns of an event are read: the few body fields the fold needs, extracted by
/// the server, so that no event is decoded from JSON here (most of them are donations, which bring
/// their shortcut and group only) but a deletion's identifiers and a report's apps, a JSON array
/// of strings: made into an array by the server it was a subquery (`ARRAY(SELECT
/// jsonb_array_elements_text(…))`), which on Citus makes the account's read of its log a router
/// plan instead of a fast-path statement (issue 66, item 1).
struct FoldLogCoding: Sendable {
    static let columns = """
        version, account_id, device_id, seq, hlc_wall, hlc_counter,
        (CASE type WHEN 'donation' THEN 0 WHEN 'deletion' THEN 1 WHEN 'voiceShortcutAdded' THEN 2
                   WHEN 'voiceShortcutUpdated' THEN 3 WHEN 'voiceShortcutDeleted' THEN 4 WHEN 'appsReported' THEN 5
                   WHEN 'learningForgotten' THEN 7 WHEN 'learningPaused' THEN 8 ELSE 6 END)::int2,
        body->>'bundleId', body->>'identifier', body->>'groupIdentifier', (body->>'voiceShortcutId')::uuid,
        body->>'phrase', body->>'title',
        (CASE type WHEN 'deletion' THEN body->'identifiers' WHEN 'appsReported' THEN body->'installed' END)::text,
        (body->>'utcOffsetMinutes')::int4, coalesce((body->>'eligibleForPrediction')::bool, true),
        body->>'scope', (body->>'deviceId')::uuid, (body->>'paused')::bool, body->>'place'
        """

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
        let voiceId = try cells.next(UUID?.self), phrase = try cells.next(String?.self), title = try cells.next(String?.self)
        let list = try cells.next(String?.self).map { try Self.strings($0, version: version, account: account) }
        let offset = try cells.next(Int32?.self), eligible = try cells.next(Bool.self)
        let scope = try cells.next(String?.self), scopeDevice = try cells.next(UUID?.self), paused = try cells.next(Bool?.self)
        let place = try cells.next(String?.self)
        let key = EventKey(hlc: HLCTimestamp(wallMillis: wall, counter: Int(counter)), deviceId: device, seq: seq)
        // `place` is a donation's token, or the place a forget's scope names.
        let learning = scope.flatMap { LearningScope(name: $0, deviceId: scopeDevice, bundleId: bundleId, identifier: identifier, place: place) }
        guard let change = Self.change(type: type, bundleId: bundleId, identifier: identifier, group: group,
                                       voiceId: voiceId, phrase: phrase, title: title, list: list, learning: learning, paused: paused) else {
            throw StoreError.corruptRow("event \(version) of account \(account) (type \(type)) lacks a field its type needs")
        }
        // A donation eligible for prediction teaches the suggestions (DESIGN §3).
        let habit = type == 0 && eligible ? HabitDonation(deviceId: device, wallMillis: wall, utcOffsetMinutes: Int(offset ?? 0), placeToken: place) : nil
        return FoldLogEntry(accountId: account, event: FoldEvent(key: key, version: version, change: change, habit: habit))
    }

    /// A deletion's identifiers or a report's apps, as the event's body holds them (a JSON array
    /// of strings); anything else there is a corrupt row (the server's array refused only what is
    /// not an array, and took numbers as their text; no push stores either).
    private static func strings(_ json: String, version: Int64, account: UUID) throws -> [String] {
        guard let strings = JSONStringArray.parse(json) else {
            throw StoreError.corruptRow("event \(version) of account \(account) holds a list that is not one of strings")
        }
        return strings
    }

    private static func change(
        type: Int16, bundleId: String?, identifier: String?, group: String?, voiceId: UUID?, phrase: String?, title: String?, list: [String]?,
        learning: LearningScope?, paused: Bool?
    ) -> FoldEvent.Change? {
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
            guard let learning, let paused else { return nil }
            return .learningPaused(learning, paused: paused)
        default:
            return nil
        }
    }
}
