import Foundation

/// The total order in which the merge rules compare events: hlc, then device, then seq.
/// "Later" always means a greater key; two distinct accepted events never share one.
public struct EventKey: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var hlc: HLCTimestamp
    public var deviceId: UUID
    public var seq: Int64

    public init(hlc: HLCTimestamp, deviceId: UUID, seq: Int64) {
        self.hlc = hlc
        self.deviceId = deviceId
        self.seq = seq
    }

    public static func < (lhs: EventKey, rhs: EventKey) -> Bool {
        if lhs.hlc != rhs.hlc { return lhs.hlc < rhs.hlc }
        if lhs.deviceId != rhs.deviceId { return lhs.deviceId.isOrdered(before: rhs.deviceId) }
        return lhs.seq < rhs.seq
    }

    public var description: String { "\(hlc)/\(deviceId.uuidString.lowercased())/\(seq)" }

    // Stored compactly as [wallMillis, counter, "device", seq]: fold states hold many keys.
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        let wall = try c.decode(Int64.self)
        let counter = try c.decode(Int.self)
        deviceId = try c.decode(UUID.self)
        seq = try c.decode(Int64.self)
        hlc = HLCTimestamp(wallMillis: wall, counter: counter)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(hlc.wallMillis)
        try c.encode(hlc.counter)
        try c.encode(deviceId)
        try c.encode(seq)
    }
}

extension UUID {
    /// Byte-wise order, the same as comparing the lowercase text forms, without building strings.
    func isOrdered(before other: UUID) -> Bool {
        let a = uuid, b = other.uuid
        return withUnsafeBytes(of: a) { lhs in
            withUnsafeBytes(of: b) { rhs in
                lhs.lexicographicallyPrecedes(rhs)
            }
        }
    }
}
