import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// How many events an account may push (issue 19: a runaway device cannot starve the others):
/// a token bucket per account that holds at most `burst` events and fills at `eventsPerSecond`.
/// The defaults are above what a person's devices push (an outbox flushed after weeks offline is
/// a few thousand events, and more is only paced, never lost) and far below what one process
/// can take: a burst of 5,000 events is about a quarter of a second of this machine's pushes.
public struct PushBudgetConfiguration: Sendable, Hashable {
    public var eventsPerSecond: Double
    public var burst: Int

    public init(eventsPerSecond: Double = 200, burst: Int = 5_000) {
        self.eventsPerSecond = eventsPerSecond
        self.burst = burst
    }

    /// Why the configuration cannot work, or nil: a bucket must hold the largest push, and fill.
    public var problem: String? {
        guard eventsPerSecond.isFinite, eventsPerSecond > 0 else { return "the push budget's rate must be above 0 events a second" }
        guard burst >= Limits.maxEventsPerPush else {
            return "the push budget's burst must hold the largest push (\(Limits.maxEventsPerPush) events), not \(burst)"
        }
        return nil
    }
}
