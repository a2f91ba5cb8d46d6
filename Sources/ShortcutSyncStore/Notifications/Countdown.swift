import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Counts the channels whose `LISTEN` is not in place yet; true for the call that reaches zero.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>

    init(_ count: Int) {
        remaining = Atomic(count)
    }

    func countDown() -> Bool {
        remaining.subtract(1, ordering: .relaxed).newValue == 0
    }

    /// Whether it has counted down to zero.
    var isDone: Bool { remaining.load(ordering: .relaxed) <= 0 }
}
