import Foundation

/// The total order in which the merge rules compare events: hlc, then device, then seq.
/// "Later" always means a greater key; two distinct accepted events never share one.
public struct EventKey: Sendable, Hashable, Comparable, CustomStringConvertible {
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

extension EventKey {
    /// The number of bytes of `sortableBytes`.
    public static let sortableByteCount = 40

    /// The key as 40 bytes whose byte-wise order is the key order (signed numbers big-endian
    /// with the sign bit flipped), so that one comparable column stores it.
    public var sortableBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.sortableByteCount)
        func append(_ value: Int64) {
            let flipped = UInt64(bitPattern: value) ^ (1 << 63)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: flipped >> UInt64(shift))) }
        }
        append(hlc.wallMillis)
        append(Int64(hlc.counter))
        withUnsafeBytes(of: deviceId.uuid) { bytes.append(contentsOf: $0) }
        append(seq)
        return bytes
    }

    /// The key `sortableBytes` gave, or nil if these are not 40 bytes.
    public init?(sortableBytes bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == Self.sortableByteCount else { return nil }
        func int64(at offset: Int) -> Int64 {
            var value: UInt64 = 0
            for byte in bytes[offset..<offset + 8] { value = value << 8 | UInt64(byte) }
            return Int64(bitPattern: value ^ (1 << 63))
        }
        let d = Array(bytes[16..<32])
        let device = UUID(uuid: (d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]))
        self.init(hlc: HLCTimestamp(wallMillis: int64(at: 0), counter: Int(int64(at: 8))), deviceId: device, seq: int64(at: 32))
    }
}

extension EventKey {
    /// Whether a fold can have stored this key (issue 65, item 6): its clock's wall within
    /// `Limits.hlcWallRange`, its counter within twice `Limits.hlcCounterRange` (a late event is
    /// folded at the clock just after a horizon, one past the counter of an event's), its seq 0
    /// (a bound, not an event) to the end of `Limits.seqRange`. A stored key beyond them was not
    /// written by a fold, and whatever a fold adds to one of them cannot overflow.
    public var isWithinLimits: Bool {
        Limits.hlcWallRange.contains(hlc.wallMillis) && (0...2 * Limits.hlcCounterRange.upperBound).contains(hlc.counter)
            && (0...Limits.seqRange.upperBound).contains(seq)
    }
}
