import Foundation

/// The person changed a voice shortcut's phrase.
public struct VoiceShortcutUpdated: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String

    public init(voiceShortcutId: UUID, phrase: String) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
    }
}
