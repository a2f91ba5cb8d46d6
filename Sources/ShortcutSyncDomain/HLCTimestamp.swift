

/// A hybrid logical clock reading: wall-clock milliseconds plus a counter that orders
/// events happening within the same millisecond, or after a clock that ran ahead.
public struct HLCTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var wallMillis: Int64
    public var counter: Int

    public init(wallMillis: Int64, counter: Int = 0) {
        self.wallMillis = wallMillis
        self.counter = counter
    }

    public static let zero = HLCTimestamp(wallMillis: 0, counter: 0)

    public static func < (lhs: HLCTimestamp, rhs: HLCTimestamp) -> Bool {
        (lhs.wallMillis, lhs.counter) < (rhs.wallMillis, rhs.counter)
    }

    public var description: String { "\(wallMillis).\(counter)" }
}
