import Foundation

/// The person removed a voice shortcut; final whatever the clocks say.
public struct VoiceShortcutDeleted: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID

    public init(voiceShortcutId: UUID) {
        self.voiceShortcutId = voiceShortcutId
    }
}
