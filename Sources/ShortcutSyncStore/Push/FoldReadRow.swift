import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// One stored row of a push's read, by the part of the statement that read it: the rows of
/// `FoldReadStatement` and `DonationReadStatement`, which share one row shape (a `UNION ALL` of
/// parts told apart by their first column).
enum FoldReadRow {
    case account(version: Int64, maxHLC: HLCTimestamp, learning: LearningRules, shortcutCount: Int, horizon: AccountHorizon?)
    case group(DonationGroupRow)
    case mark(DeletionScope, EventKey)
    case forgotten(ShortcutID, EventKey)
    case voiceShortcut(VoiceShortcutRow)
    case device(UUID, Stamped<Set<String>>)
    case head(AccountHead)

    /// Reads a row as the statements write it.
    init(_ row: PostgresRow) throws {
        var cells = CellReader(row)
        let part = try cells.next(Int32.self)
        let s1 = try cells.next(String?.self), s2 = try cells.next(String?.self), s3 = try cells.next(String?.self)
        let s4 = try cells.next(String?.self), s5 = try cells.next(String?.self)
        let k1 = try cells.next(ByteBuffer?.self), k2 = try cells.next(ByteBuffer?.self)
        let n1 = try cells.next(Int64?.self), n2 = try cells.next(Int64?.self), n3 = try cells.next(Int64?.self)
        let u1 = try cells.next(UUID?.self), u2 = try cells.next(UUID?.self)
        let f1 = try cells.next(Bool?.self), f2 = try cells.next(Bool?.self)
        let installed = try cells.next([String]?.self)
        let k3 = try cells.next(ByteBuffer?.self)
        let n4 = try cells.next(Int32?.self)
        let k4 = try cells.next(ByteBuffer?.self)
        func required<T>(_ value: T?, _ column: String) throws -> T {
            guard let value else { throw StoreError.corruptRow("a stored fold row (part \(part)) has no \(column)") }
            return value
        }
        switch part {
        case 0:
            self = .account(version: try StoredCount.checked(try required(n1, "version"), "version"),
                            maxHLC: HLCTimestamp(wallMillis: n2 ?? 0, counter: Int(n3 ?? 0)),
                            learning: try k3.map(LearningRules.init(stored:)) ?? LearningRules(),
                            shortcutCount: Int(try required(n4, "shortcut_count")),
                            horizon: try k4.map(CompactionColumns.horizon(stored:)))
        case 1:
            let shortcut = ShortcutID(bundleId: try required(s1, "bundle_id"), identifier: try required(s2, "identifier"))
            let id = DonationGroupID(shortcut: shortcut, group: try required(s3, "group_id"))
            var group = DonationGroupRow(id: id, count: Int(try StoredCount.checked(try required(n1, "donations"), "donations", atLeast: 1)),
                                         latest: try EventKey(stored: try required(k1, "latest_key")),
                                         latestVersion: try StoredCount.checked(try required(n2, "latest_version"), "latest_version", atLeast: 1),
                                         coveredBelow: try k2.map(EventKey.init(stored:)),
                                         habits: try k3.map(ShortcutHabits.init(stored:)) ?? ShortcutHabits())
            if let k4 { try CompactionColumns.read(compacted: k4, into: &group) }
            self = .group(group)
        case 2 where s2 == StoredScopes.forget:
            let shortcut = ShortcutID(bundleId: try required(s1, "bundle_id"), identifier: try required(s3, "value"))
            self = .forgotten(shortcut, try EventKey(stored: try required(k1, "key")))
        case 2:
            let scope = try StoredScopes.scope(bundleId: try required(s1, "bundle_id"), scope: try required(s2, "scope"),
                                               value: try required(s3, "value"))
            self = .mark(scope, try EventKey(stored: try required(k1, "key")))
        case 3:
            var voice = VoiceShortcutRow(id: try required(u1, "voice_shortcut_id"), deleted: try required(f1, "deleted"),
                                         normalizedPhrase: s5, conflictsWith: u2, targetAvailable: try required(f2, "target_available"))
            if let k1, let s1, let s2, let s3 {
                voice.target = Stamped(key: try EventKey(stored: k1), value: VoiceShortcutTarget(bundleId: s1, identifier: s2, title: s3))
            }
            if let k2, let s4 {
                voice.phrase = Stamped(key: try EventKey(stored: k2), value: s4)
            }
            self = .voiceShortcut(voice)
        case 4:
            self = .device(try required(u1, "device_id"),
                           Stamped(key: try EventKey(stored: try required(k1, "reported_key")), value: Set(try required(installed, "installed"))))
        case 5:
            self = .head(AccountHead(version: try required(n1, "version"), foldedVersion: try required(n2, "folded_version"),
                                     deviceLastSeq: try required(n3, "last seq"), mark: try required(s1, "mark")))
        default:
            throw StoreError.corruptRow("a stored fold row of unknown part \(part)")
        }
    }
}
