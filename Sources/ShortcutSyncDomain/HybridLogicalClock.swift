

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

    /// The largest counter a timestamp carries (DESIGN §5); past it the clock moves its wall
    /// clock on by a millisecond instead, so it never overflows and never goes backwards.
    public static let maxCounter = Int(Int32.max)

    /// The timestamp of a new local event at physical time `physicalMillis`.
    public mutating func tick(physicalMillis: Int64) -> HLCTimestamp {
        if physicalMillis > last.wallMillis {
            last = HLCTimestamp(wallMillis: physicalMillis, counter: 0)
        } else {
            last = Self.after(wallMillis: last.wallMillis, counter: last.counter)
        }
        return last
    }

    /// Merges a timestamp seen from elsewhere (a pull's `hlc`) so later local events order after it.
    /// A remote counter outside the contract's range is taken as its nearest bound.
    public mutating func receive(_ remote: HLCTimestamp, physicalMillis: Int64) {
        let remoteCounter = min(max(remote.counter, 0), Self.maxCounter)
        let wall = max(physicalMillis, last.wallMillis, remote.wallMillis)
        if wall == last.wallMillis && wall == remote.wallMillis {
            last = Self.after(wallMillis: wall, counter: max(last.counter, remoteCounter))
        } else if wall == last.wallMillis {
            last = Self.after(wallMillis: wall, counter: last.counter)
        } else if wall == remote.wallMillis {
            last = Self.after(wallMillis: wall, counter: remoteCounter)
        } else {
            last = HLCTimestamp(wallMillis: wall, counter: 0)
        }
    }

    /// The smallest timestamp after `(wallMillis, counter)`: the next counter, or, once the
    /// counter is at its bound, the next millisecond (held at the greatest wall clock there is).
    static func after(wallMillis: Int64, counter: Int) -> HLCTimestamp {
        if counter < maxCounter {
            return HLCTimestamp(wallMillis: wallMillis, counter: max(counter, -1) + 1)
        }
        if wallMillis == .max {
            return HLCTimestamp(wallMillis: wallMillis, counter: maxCounter)
        }
        return HLCTimestamp(wallMillis: wallMillis + 1, counter: 0)
    }
}
