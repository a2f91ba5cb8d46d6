import Foundation

/// The eight kinds of fact a device pushes, and the one the service writes for it when it is
/// signed out (`deviceSignedOut`, never pushed).
public enum EventType: String, Sendable, Hashable, Codable, CaseIterable {
    case donation
    case deletion
    case voiceShortcutAdded
    case voiceShortcutUpdated
    case voiceShortcutDeleted
    case appsReported
    case deviceSignedOut
    /// What the suggestions learned of a scope is forgotten (`LearningForgotten`).
    case learningForgotten
    /// The suggestions' learning of the account or of a device paused or resumed (`LearningPaused`).
    case learningPaused

    /// Whether a device may push events of this type (the service writes the others).
    public var isPushed: Bool { self != .deviceSignedOut }
}
