import Foundation

/// The six kinds of fact a device pushes, and the one the service writes for it when it is
/// signed out (`deviceSignedOut`, never pushed).
public enum EventType: String, Sendable, Hashable, Codable, CaseIterable {
    case donation
    case deletion
    case voiceShortcutAdded
    case voiceShortcutUpdated
    case voiceShortcutDeleted
    case appsReported
    case deviceSignedOut

    /// Whether a device may push events of this type (the service writes the others).
    public var isPushed: Bool { self != .deviceSignedOut }
}
