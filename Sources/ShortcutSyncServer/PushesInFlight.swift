import Foundation
import Synchronization

/// How many pushes of each account this server is answering at once, within a limit.
///
/// Pushes of one account wait for each other on its head row in PostgreSQL: past a few at once,
/// each more one only holds a place (and, once its body is in, a pooled connection) while it
/// waits. One person's devices pushing back to back take no more than `limit` of either.
final class PushesInFlight: Sendable {
    let limit: Int
    private let counts = Mutex<[UUID: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// The pushes under way, of every account (`shortcut_sync_pushes_under_way`).
    var total: Int {
        counts.withLock { $0.values.reduce(0, +) }
    }

    /// Counts a push of `account` in, when fewer than `limit` (at most `self.limit`) are under
    /// way; false otherwise.
    func enter(_ account: UUID, limit: Int? = nil) -> Bool {
        let limit = min(limit ?? self.limit, self.limit)
        return counts.withLock { counts in
            let now = counts[account, default: 0]
            guard now < limit else { return false }
            counts[account] = now + 1
            return true
        }
    }

    /// Counts a push of `account` out (once for each `enter` that returned true).
    func leave(_ account: UUID) {
        counts.withLock { counts in
            let now = counts[account, default: 0]
            counts[account] = now > 1 ? now - 1 : nil
        }
    }
}
