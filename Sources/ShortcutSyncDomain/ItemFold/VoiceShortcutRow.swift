import Foundation

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
