import Foundation

/// The person bound a phrase to a shortcut (`INVoiceShortcut` added).
public struct VoiceShortcutAdded: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String
    public var bundleId: String
    public var identifier: String
    public var title: String

    public init(voiceShortcutId: UUID, phrase: String, bundleId: String, identifier: String, title: String) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
    }
}
