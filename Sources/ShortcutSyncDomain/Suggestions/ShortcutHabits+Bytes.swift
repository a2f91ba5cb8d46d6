import Foundation

extension ShortcutHabits {
    /// The sums as bytes, for one column: deterministic (devices in uuid order, hours and places
    /// ascending), so equal sums are equal bytes and `verify` can compare rows byte for byte.
    /// Format 1: per device its 16 bytes, its count (UInt32), its total, its number of hours
    /// (UInt8) and each hour (UInt8) with its sum; a sum is its number of limbs (UInt8) and each
    /// limb (UInt64), all little-endian. Format 2, written only when some device's donations
    /// carried a place (so sums without places keep the bytes they always had): format 1's device
    /// followed by its number of places (UInt16, at most 2,048) and each place's key (UInt16: its
    /// slot × 8 + its part of the week, `PlaceToken.key`) with its sum. Empty sums are no bytes at all (the column is NULL).
    public var bytes: [UInt8]? {
        guard !isEmpty else { return nil }
        let withPlaces = byDevice.values.contains { !$0.places.isEmpty }
        var bytes: [UInt8] = [withPlaces ? 2 : 1]
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        func append(_ sum: WeightSum) {
            bytes.append(UInt8(sum.limbs.count))
            for limb in sum.limbs { append(limb) }
        }
        for device in byDevice.keys.sorted(by: { $0.isOrdered(before: $1) }) {
            let sums = byDevice[device]!
            withUnsafeBytes(of: device.uuid) { bytes.append(contentsOf: $0) }
            append(UInt32(clamping: sums.count))
            append(sums.total)
            bytes.append(UInt8(sums.hours.count))
            for hour in sums.hours.keys.sorted() {
                bytes.append(UInt8(hour))
                append(sums.hours[hour]!)
            }
            guard withPlaces else { continue }
            append(UInt16(sums.places.count))
            for place in sums.places.keys.sorted() {
                append(place)
                append(sums.places[place]!)
            }
        }
        return bytes
    }

    /// The sums `bytes` gave; nil if these are not such bytes.
    public init?(bytes: some Collection<UInt8>) {
        var reader = ByteReader(bytes: Array(bytes))
        guard let format = reader.byte(), format == 1 || format == 2 else { return nil }
        var byDevice: [UUID: HabitSums] = [:]
        while !reader.atEnd {
            guard let device = reader.uuid(), let count = reader.uint32(), let total = reader.sum(), let hourCount = reader.byte() else { return nil }
            var hours: [Int: WeightSum] = [:]
            hours.reserveCapacity(Int(hourCount))
            for _ in 0..<hourCount {
                guard let hour = reader.byte(), hour < 168, hours[Int(hour)] == nil, let sum = reader.sum(), !sum.isZero else { return nil }
                hours[Int(hour)] = sum
            }
            var places: [UInt16: WeightSum] = [:]
            if format == 2 {
                guard let placeCount = reader.uint16(), placeCount <= 256 * PlaceToken.partsOfWeek else { return nil }
                for _ in 0..<placeCount {
                    guard let place = reader.uint16(), places[place] == nil, let sum = reader.sum(), !sum.isZero else { return nil }
                    places[place] = sum
                }
            }
            guard count > 0, byDevice[device] == nil else { return nil }
            byDevice[device] = HabitSums(stored: Int(count), total: total, hours: hours, places: places)
        }
        self.init(nonEmpty: byDevice)
    }
}

/// Reads the stored form of `ShortcutHabits`, never past its end, without copying as it goes
/// (a suggestions request reads one per donation group of the account).
struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uuid() -> UUID? {
        guard bytes.count - offset >= 16 else { return nil }
        let b = bytes, o = offset
        offset += 16
        return UUID(uuid: (b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7],
                           b[o + 8], b[o + 9], b[o + 10], b[o + 11], b[o + 12], b[o + 13], b[o + 14], b[o + 15]))
    }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian integer of `width` bytes.
    private mutating func integer(width: Int) -> UInt64? {
        guard bytes.count - offset >= width else { return nil }
        var value: UInt64 = 0
        for index in stride(from: offset + width - 1, through: offset, by: -1) { value = value << 8 | UInt64(bytes[index]) }
        offset += width
        return value
    }

    mutating func uint16() -> UInt16? { integer(width: 2).map { UInt16(truncatingIfNeeded: $0) } }

    mutating func uint32() -> UInt32? { integer(width: 4).map { UInt32(truncatingIfNeeded: $0) } }

    mutating func uint64() -> UInt64? { integer(width: 8) }

    mutating func sum() -> WeightSum? {
        guard let count = byte() else { return nil }
        var limbs: [UInt64] = []
        limbs.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let limb = uint64() else { return nil }
            limbs.append(limb)
        }
        return WeightSum(limbs: limbs)
    }
}
