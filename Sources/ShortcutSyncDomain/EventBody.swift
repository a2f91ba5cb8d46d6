import Foundation

/// The body of an event, one case per `EventType`.
public enum EventBody: Sendable, Hashable {
    case donation(Donation)
    case deletion(Deletion)
    case voiceShortcutAdded(VoiceShortcutAdded)
    case voiceShortcutUpdated(VoiceShortcutUpdated)
    case voiceShortcutDeleted(VoiceShortcutDeleted)
    case appsReported(AppsReported)
    /// The device was signed out: what it taught the suggestions is forgotten (DESIGN §3). The
    /// service appends it as the device's last event, with the greatest seq there is, so nothing
    /// of the device can follow it.
    case signedOut
    case learningForgotten(LearningForgotten)
    case learningPaused(LearningPaused)

    public var type: EventType {
        switch self {
        case .donation: .donation
        case .deletion: .deletion
        case .voiceShortcutAdded: .voiceShortcutAdded
        case .voiceShortcutUpdated: .voiceShortcutUpdated
        case .voiceShortcutDeleted: .voiceShortcutDeleted
        case .appsReported: .appsReported
        case .signedOut: .deviceSignedOut
        case .learningForgotten: .learningForgotten
        case .learningPaused: .learningPaused
        }
    }

    /// Decodes the body of a given type from a decoder positioned on the body's fields.
    public init(type: EventType, from decoder: any Decoder) throws {
        switch type {
        case .donation: self = .donation(try Donation(from: decoder))
        case .deletion: self = .deletion(try Deletion(from: decoder))
        case .voiceShortcutAdded: self = .voiceShortcutAdded(try VoiceShortcutAdded(from: decoder))
        case .voiceShortcutUpdated: self = .voiceShortcutUpdated(try VoiceShortcutUpdated(from: decoder))
        case .voiceShortcutDeleted: self = .voiceShortcutDeleted(try VoiceShortcutDeleted(from: decoder))
        case .appsReported: self = .appsReported(try AppsReported(from: decoder))
        case .deviceSignedOut: self = .signedOut
        case .learningForgotten: self = .learningForgotten(try LearningForgotten(from: decoder))
        case .learningPaused: self = .learningPaused(try LearningPaused(from: decoder))
        }
    }

    /// Encodes the body's fields (without `type`) into the encoder.
    public func encodeFields(to encoder: any Encoder) throws {
        switch self {
        case .donation(let body): try body.encode(to: encoder)
        case .deletion(let body): try body.encode(to: encoder)
        case .voiceShortcutAdded(let body): try body.encode(to: encoder)
        case .voiceShortcutUpdated(let body): try body.encode(to: encoder)
        case .voiceShortcutDeleted(let body): try body.encode(to: encoder)
        case .appsReported(let body): try body.encode(to: encoder)
        case .signedOut: _ = encoder.container(keyedBy: NoFields.self)
        case .learningForgotten(let body): try body.encode(to: encoder)
        case .learningPaused(let body): try body.encode(to: encoder)
        }
    }
}

/// The fields of a body that has none: it is written as `{}`.
private enum NoFields: CodingKey {}
