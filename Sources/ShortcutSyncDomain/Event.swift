import Foundation

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
