import Foundation

/// A voice shortcut as a device sees it.
public struct VoiceShortcutView: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String
    public var normalizedPhrase: String
    public var bundleId: String
    public var identifier: String
    public var title: String
    public var status: VoiceShortcutStatus
    /// The id of the voice shortcut that owns the phrase, when `status` is `phraseConflict`.
    public var conflictsWith: UUID?
    /// False when the shortcut it is bound to does not exist (its donations were deleted).
    public var targetAvailable: Bool
    /// Whether the app is installed on the device that reads this view.
    public var appInstalled: Bool

    public init(
        voiceShortcutId: UUID, phrase: String, normalizedPhrase: String, bundleId: String,
        identifier: String, title: String, status: VoiceShortcutStatus, conflictsWith: UUID?,
        targetAvailable: Bool, appInstalled: Bool
    ) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
        self.normalizedPhrase = normalizedPhrase
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
        self.status = status
        self.conflictsWith = conflictsWith
        self.targetAvailable = targetAvailable
        self.appInstalled = appInstalled
    }
}
