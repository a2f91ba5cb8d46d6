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

/// The clock a device (or the demo's simulated device) keeps.
///
/// It never goes backwards, even when the physical clock does, and it moves past every
/// timestamp it has seen from others, so causally later events get greater keys.
/// Physical time is passed in, which keeps this type free of I/O and easy to test.
public struct HybridLogicalClock: Sendable, Hashable {
    public private(set) var last: HLCTimestamp

    public init(last: HLCTimestamp = .zero) {
        self.last = last
    }

    /// The timestamp of a new local event at physical time `physicalMillis`.
    public mutating func tick(physicalMillis: Int64) -> HLCTimestamp {
        if physicalMillis > last.wallMillis {
            last = HLCTimestamp(wallMillis: physicalMillis, counter: 0)
        } else {
            last = HLCTimestamp(wallMillis: last.wallMillis, counter: last.counter + 1)
        }
        return last
    }

    /// Merges a timestamp seen from elsewhere (a pull's `hlc`) so later local events order after it.
    public mutating func receive(_ remote: HLCTimestamp, physicalMillis: Int64) {
        let wall = max(physicalMillis, last.wallMillis, remote.wallMillis)
        let counter: Int
        if wall == last.wallMillis && wall == remote.wallMillis {
            counter = max(last.counter, remote.counter) + 1
        } else if wall == last.wallMillis {
            counter = last.counter + 1
        } else if wall == remote.wallMillis {
            counter = remote.counter + 1
        } else {
            counter = 0
        }
        last = HLCTimestamp(wallMillis: wall, counter: counter)
    }
}
