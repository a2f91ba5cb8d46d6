import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import ShortcutSyncStore

/// What one pusher's pushes came to.
struct PushTally: Sendable {
    var events = 0
    var pushes = 0
    var failures: [String: Int] = [:]
    /// Push latencies in microseconds.
    var histogram = Self.newHistogram()

    static func newHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    }

    mutating func add(_ other: PushTally) {
        events += other.events
        pushes += other.pushes
        failures.merge(other.failures, uniquingKeysWith: +)
        histogram.add(other.histogram)
    }
}
