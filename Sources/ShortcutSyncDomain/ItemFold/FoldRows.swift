import Foundation

/// The donations of one shortcut that share a `groupIdentifier`: a deletion by group selects
/// them together, so the fold keeps them together.
public struct DonationGroupID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var shortcut: ShortcutID
    /// "" for donations without a group (a real group is never empty).
    public var group: String

    public init(shortcut: ShortcutID, group: String) {
        self.shortcut = shortcut
        self.group = group
    }

    public static func < (lhs: DonationGroupID, rhs: DonationGroupID) -> Bool {
        (lhs.shortcut, lhs.group) < (rhs.shortcut, rhs.group)
    }

    public var description: String { group.isEmpty ? shortcut.description : "\(shortcut) in \(group)" }
}

/// What later events need of one donation group: how many of its donations no deletion covers,
/// the latest of them, and the key below which deletions cover it. Never more, however long its
/// history: a deletion that lands among older donations has them counted in the log instead.
public struct DonationGroupRow: Sendable, Hashable {
    public var id: DonationGroupID
    /// Uncovered donations; a row with none is not kept.
    public var count: Int
    public var latest: EventKey
    /// The log position of the latest uncovered donation, whose attributes the shortcut shows.
    public var latestPosition: Int64
    /// The greatest key of the deletions selecting this group, when the row was written: every
    /// donation below it is covered, every counted one is at or above it.
    public var coveredBelow: EventKey?

    public init(id: DonationGroupID, count: Int, latest: EventKey, latestPosition: Int64, coveredBelow: EventKey?) {
        self.id = id
        self.count = count
        self.latest = latest
        self.latestPosition = latestPosition
        self.coveredBelow = coveredBelow
    }
}

/// What one deletion selects, and what remembers its newest key: a deletion covers every
/// older donation it selects, so per selector only the newest key matters.
public enum DeletionScope: Sendable, Hashable, CustomStringConvertible {
    case all(bundleId: String)
    case identifier(ShortcutID)
    case group(bundleId: String, group: String)

    public var bundleId: String {
        switch self {
        case .all(let bundleId), .group(let bundleId, _): bundleId
        case .identifier(let id): id.bundleId
        }
    }

    /// Whether this scope selects the donations of `id`.
    public func selects(_ id: DonationGroupID) -> Bool {
        switch self {
        case .all(let bundleId): id.shortcut.bundleId == bundleId
        case .identifier(let shortcut): id.shortcut == shortcut
        case .group(let bundleId, let group): id.shortcut.bundleId == bundleId && id.group == group
        }
    }

    /// The scopes whose deletions select a donation group.
    public static func selecting(_ id: DonationGroupID) -> [DeletionScope] {
        var scopes: [DeletionScope] = [.all(bundleId: id.shortcut.bundleId), .identifier(id.shortcut)]
        if !id.group.isEmpty { scopes.append(.group(bundleId: id.shortcut.bundleId, group: id.group)) }
        return scopes
    }

    /// The scopes one deletion raises.
    public static func raised(by deletion: Deletion) -> [DeletionScope] {
        switch deletion.selector {
        case .identifiers(let identifiers):
            identifiers.map { .identifier(ShortcutID(bundleId: deletion.bundleId, identifier: $0)) }
        case .groupIdentifier(let group):
            [.group(bundleId: deletion.bundleId, group: group)]
        case .all:
            [.all(bundleId: deletion.bundleId)]
        }
    }

    public var description: String {
        switch self {
        case .all(let bundleId): "all of \(bundleId)"
        case .identifier(let id): "\(id)"
        case .group(let bundleId, let group): "group \(group) of \(bundleId)"
        }
    }
}

/// What a voice shortcut is bound to: its latest `voiceShortcutAdded` without the phrase (which
/// has a key of its own: updates change it).
public struct VoiceShortcutTarget: Sendable, Hashable {
    public var bundleId: String
    public var identifier: String
    public var title: String

    public init(bundleId: String, identifier: String, title: String) {
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
    }

    public init(_ added: VoiceShortcutAdded) {
        self.init(bundleId: added.bundleId, identifier: added.identifier, title: added.title)
    }

    public var shortcut: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}

/// One voice shortcut's fold state, and what its view needs that only other rows know (the
/// owner of its phrase, whether its shortcut exists), kept so the row alone gives its view.
public struct VoiceShortcutRow: Sendable, Hashable {
    public var id: UUID
    /// A deletion is final: the row stays as a tombstone so later adds and updates change nothing.
    public var deleted: Bool
    /// Set by the latest `voiceShortcutAdded`; nil while only updates arrived.
    public var target: Stamped<VoiceShortcutTarget>?
    public var phrase: Stamped<String>?
    public var normalizedPhrase: String?
    /// The owner of its phrase when that is another voice shortcut.
    public var conflictsWith: UUID?
    public var targetAvailable: Bool

    public init(id: UUID, deleted: Bool = false, target: Stamped<VoiceShortcutTarget>? = nil, phrase: Stamped<String>? = nil,
                normalizedPhrase: String? = nil, conflictsWith: UUID? = nil, targetAvailable: Bool = false) {
        self.id = id
        self.deleted = deleted
        self.target = target
        self.phrase = phrase
        self.normalizedPhrase = normalizedPhrase
        self.conflictsWith = conflictsWith
        self.targetAvailable = targetAvailable
    }

    /// Whether it is in the view: added, with a phrase, not deleted.
    public var exists: Bool { !deleted && target != nil && phrase != nil }

    /// The target's shortcut, once added.
    public var targetShortcut: ShortcutID? {
        target?.value.shortcut
    }

    /// The row as the account's whole view shows it (`appInstalled` true; pulls set it per device).
    public var view: VoiceShortcutView? {
        guard exists, let target = target?.value, let phrase, let normalizedPhrase else { return nil }
        return VoiceShortcutView(
            voiceShortcutId: id, phrase: phrase.value, normalizedPhrase: normalizedPhrase,
            bundleId: target.bundleId, identifier: target.identifier, title: target.title,
            status: conflictsWith == nil ? .active : .phraseConflict, conflictsWith: conflictsWith,
            targetAvailable: targetAvailable, appInstalled: true)
    }
}

/// A shortcut's projected row, apart from the attributes of its latest donation, which are
/// those of the event at `latestPosition`.
public struct ShortcutProjection: Sendable, Hashable {
    public var donationCount: Int
    public var latest: EventKey
    public var latestPosition: Int64

    public init(donationCount: Int, latest: EventKey, latestPosition: Int64) {
        self.donationCount = donationCount
        self.latest = latest
        self.latestPosition = latestPosition
    }

    public var lastDonatedAt: HLCTimestamp { latest.hlc }

    /// The shortcut of the donation groups `rows` (all of one shortcut): nil when none is left.
    public init?(groups rows: some Sequence<DonationGroupRow>) {
        var count = 0
        var latest: DonationGroupRow?
        for row in rows where row.count > 0 {
            count += row.count
            if latest.map({ row.latest > $0.latest }) ?? true { latest = row }
        }
        guard let latest else { return nil }
        self.init(donationCount: count, latest: latest.latest, latestPosition: latest.latestPosition)
    }
}

/// The rows of one account that a batch reads, as stored before it: a subset, chosen by
/// `FoldNeeds`, of everything the account's fold keeps.
public struct AccountFoldRows: Sendable, Hashable {
    /// Raised by every batch that changes the account's view.
    public var version: Int64 = 0
    public var maxHLC: HLCTimestamp = .zero
    public var groups: [DonationGroupID: DonationGroupRow] = [:]
    public var marks: [DeletionScope: EventKey] = [:]
    public var voiceShortcuts: [UUID: VoiceShortcutRow] = [:]
    /// Each device's latest `appsReported`.
    public var devices: [UUID: Stamped<Set<String>>] = [:]

    public init() {}
}
