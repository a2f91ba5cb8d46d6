import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Events folded so far by the ranges of a rebuild together.
final class EventCount: Sendable {
    private let count = Mutex(0)

    /// Adds `more` and returns the sum.
    func add(_ more: Int) -> Int {
        count.withLock { $0 += more; return $0 }
    }
}
