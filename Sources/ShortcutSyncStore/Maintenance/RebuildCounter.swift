import Foundation
import Logging
import ShortcutSyncDomain
import Synchronization

/// What the ranges and the catch-up of a rebuild folded so far, together.
final class RebuildCounter: Sendable {
    private let progress: Mutex<RebuildProgress>

    /// A count at zero of a rebuild of a log of `total` events.
    init(total: Int) {
        progress = Mutex(RebuildProgress(processed: 0, total: total, accounts: 0))
    }

    /// Adds `events` folded events of `accounts` accounts and returns the sums.
    func add(events: Int, accounts: Int) -> RebuildProgress {
        progress.withLock {
            $0.processed += events
            $0.accounts += accounts
            return $0
        }
    }

    /// The sums now.
    var current: RebuildProgress { progress.withLock { $0 } }
}
