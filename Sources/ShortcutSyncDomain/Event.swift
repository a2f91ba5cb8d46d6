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

/// The body of an event, one case per `EventType`.
public enum EventBody: Sendable, Hashable {
    case donation(Donation)
    case deletion(Deletion)
    case voiceShortcutAdded(VoiceShortcutAdded)
    case voiceShortcutUpdated(VoiceShortcutUpdated)
    case voiceShortcutDeleted(VoiceShortcutDeleted)
    case appsReported(AppsReported)

    public var type: EventType {
        switch self {
        case .donation: .donation
        case .deletion: .deletion
        case .voiceShortcutAdded: .voiceShortcutAdded
        case .voiceShortcutUpdated: .voiceShortcutUpdated
        case .voiceShortcutDeleted: .voiceShortcutDeleted
        case .appsReported: .appsReported
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
        }
    }
}

/// An event as a device pushes it: the envelope flattened with its body, `type` naming the body.
public struct Event: Sendable, Hashable, Codable {
    /// Made on the device; unique forever.
    public var id: UUID
    /// The device's own counter: 1, 2, 3… without gaps, never reused.
    public var seq: Int64
    public var hlc: HLCTimestamp
    public var body: EventBody

    public init(id: UUID = UUID(), seq: Int64, hlc: HLCTimestamp, body: EventBody) {
        self.id = id
        self.seq = seq
        self.hlc = hlc
        self.body = body
    }

    public var type: EventType { body.type }

    enum CodingKeys: String, CodingKey {
        case id, seq, hlc, type
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        seq = try c.decode(Int64.self, forKey: .seq)
        hlc = try c.decode(HLCTimestamp.self, forKey: .hlc)
        let type = try c.decode(EventType.self, forKey: .type)
        body = try EventBody(type: type, from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(seq, forKey: .seq)
        try c.encode(hlc, forKey: .hlc)
        try c.encode(body.type, forKey: .type)
        try body.encodeFields(to: encoder)
    }
}

/// An event the service accepted from one of an account's devices.
public struct AcceptedEvent: Sendable, Hashable {
    public var deviceId: UUID
    public var event: Event

    public init(deviceId: UUID, event: Event) {
        self.deviceId = deviceId
        self.event = event
    }

    /// The merge order of DESIGN §3: `(hlc.wallMillis, hlc.counter, deviceId, seq)`.
    public var key: EventKey {
        EventKey(hlc: event.hlc, deviceId: deviceId, seq: event.seq)
    }
}
