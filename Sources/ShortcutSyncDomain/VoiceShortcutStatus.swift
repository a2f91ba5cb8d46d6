import Foundation

/// Whether a voice shortcut owns its phrase or waits for the person to choose another.
public enum VoiceShortcutStatus: String, Sendable, Hashable, Codable {
    case active
    case phraseConflict
}
