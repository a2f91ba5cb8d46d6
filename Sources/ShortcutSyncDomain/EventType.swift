import Foundation

/// The six kinds of fact a device pushes.
public enum EventType: String, Sendable, Hashable, Codable, CaseIterable {
    case donation
    case deletion
    case voiceShortcutAdded
    case voiceShortcutUpdated
    case voiceShortcutDeleted
    case appsReported
}
