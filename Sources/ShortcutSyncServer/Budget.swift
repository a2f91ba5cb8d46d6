import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// A budget per holder (an account's pushed events, a device's pulls): a token bucket each,
/// holding at most `burst` and filling at `perSecond`. Each process keeps its own (with several
/// servers behind a balancer a budget is per server). Memory is bounded: a bucket that has
/// filled up again is the same as none, and is dropped when the table grows past `sweepAbove`.
final class Budget: Sendable {
    let perSecond: Double
    let burst: Int
    private let sweepAbove: Int
    private let buckets = Mutex<[UUID: Bucket]>([:])
    /// The monotonic clock the buckets fill by; tests stop it to make a refusal certain.
    private let now: @Sendable () -> ContinuousClock.Instant

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        /// The end of the wait the holder was last told (`Retry-After`): until then each of its
        /// requests is refused (a push is first held until the wait ends, `PushAdmissionMiddleware`),
        /// so a device that does not wait costs almost nothing.
        var refusedUntil: ContinuousClock.Instant?
        /// The end of a wait told for another reason (`tell`): until then a push is held before
        /// it is admitted, but one admitted before is not refused for it.
        var heldUntil: ContinuousClock.Instant?
    }

    init(perSecond: Double, burst: Int, sweepAbove: Int = 10_000,
         now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.perSecond = perSecond
        self.burst = burst
        self.sweepAbove = sweepAbove
        self.now = now
    }

    /// An account's budget of pushed events.
    convenience init(_ configuration: PushBudgetConfiguration, sweepAbove: Int = 10_000,
                     now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.init(perSecond: configuration.eventsPerSecond, burst: configuration.burst, sweepAbove: sweepAbove, now: now)
    }

    /// Takes `units` from the holder's budget, or, when it does not hold them, takes nothing and
    /// returns how many whole seconds until it will (for `Retry-After`).
    func charge(_ holder: UUID, _ units: Int, now: ContinuousClock.Instant? = nil) -> Int? {
        let now = now ?? self.now()
        return buckets.withLock { buckets in
            var bucket = refilled(buckets[holder], now: now)
            if let wait = Self.stillRefused(bucket, now: now) { return wait }
            let wanted = Double(units)
            guard bucket.tokens >= wanted else {
                let wait = max(1, Int(((wanted - bucket.tokens) / perSecond).rounded(.up)))
                bucket.refusedUntil = now + .seconds(wait)
                buckets[holder] = bucket
                return wait
            }
            bucket.tokens -= wanted
            buckets[holder] = bucket
            if buckets.count > sweepAbove { sweep(&buckets, now: now) }
            return nil
        }
    }

    /// Whether the holder's budget is empty now (checked before a push's body is read): the
    /// seconds until it holds a unit again, or nil. A wait returned is the wait the holder is
    /// told (`Retry-After`), as `charge`'s is.
    func exhausted(_ holder: UUID, now: ContinuousClock.Instant? = nil) -> Int? {
        let now = now ?? self.now()
        return buckets.withLock { buckets in
            var bucket = refilled(buckets[holder], now: now)
            if let wait = Self.stillRefused(bucket, now: now) { return wait }
            guard bucket.tokens < 1 else { return nil }
            let wait = max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
            bucket.refusedUntil = now + .seconds(wait)
            buckets[holder] = bucket
            return wait
        }
    }

    /// Tells the holder to wait `wait` from now, for a refusal of another kind than the budget's
    /// (its pushes under way), unless it was already told to wait longer. Its requests are held
    /// until then (`toldWaitLeft`); the budget is not charged with it.
    func tell(_ holder: UUID, toWait wait: Duration, now: ContinuousClock.Instant? = nil) {
        let now = now ?? self.now()
        buckets.withLock { buckets in
            var bucket = refilled(buckets[holder], now: now)
            bucket.heldUntil = max(bucket.heldUntil ?? now, now + wait)
            buckets[holder] = bucket
        }
    }

    /// What is left of the longest wait the holder was told, while it runs: a request made now
    /// did not wait as it was told.
    func toldWaitLeft(_ holder: UUID, now: ContinuousClock.Instant? = nil) -> Duration? {
        let now = now ?? self.now()
        return buckets.withLock { buckets in
            guard let bucket = buckets[holder] else { return nil }
            let until = [bucket.refusedUntil, bucket.heldUntil].compactMap { $0 }.max()
            guard let until, now < until else { return nil }
            return until - now
        }
    }

    /// Holders whose budget is not full (for tests and the table's bound).
    var trackedHolders: Int { buckets.withLock { $0.count } }

    private func refilled(_ bucket: Bucket?, now: ContinuousClock.Instant) -> Bucket {
        let burst = Double(burst)
        guard let bucket else { return Bucket(tokens: burst, updated: now) }
        let elapsed = max(0, (now - bucket.updated).inSeconds)
        return Bucket(tokens: min(burst, bucket.tokens + elapsed * perSecond), updated: now,
                      refusedUntil: bucket.refusedUntil, heldUntil: bucket.heldUntil)
    }

    /// The whole seconds left of the wait the holder was told, if it has not passed.
    private static func stillRefused(_ bucket: Bucket, now: ContinuousClock.Instant) -> Int? {
        guard let until = bucket.refusedUntil, now < until else { return nil }
        return max(1, Int((until - now).inSeconds.rounded(.up)))
    }

    private func sweep(_ buckets: inout [UUID: Bucket], now: ContinuousClock.Instant) {
        let burst = Double(burst)
        buckets = buckets.filter { refilled($0.value, now: now).tokens < burst }
    }
}
