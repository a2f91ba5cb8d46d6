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
    /// The end of the wait each device was last told (`tell`), whatever the reason: until then
    /// its pushes are held (`PushAdmissionMiddleware`). Per device, not per account: a device
    /// that was never told to wait is never held because another device of its account was
    /// (issue 65, item 10). Bounded as the buckets are: a wait that passed is the same as none.
    private let toldWaits = Mutex<[UUID: ContinuousClock.Instant]>([:])
    /// The monotonic clock the buckets fill by; tests stop it to make a refusal certain.
    private let now: @Sendable () -> ContinuousClock.Instant

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        /// The end of the wait the holder was last told (`Retry-After`): until then each of its
        /// requests is refused at once, before its body is read, so a device that does not wait
        /// costs almost nothing (and once told itself, it is held, `toldWaits`).
        var refusedUntil: ContinuousClock.Instant?
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

    /// Tells `device` it was answered with a wait (`Retry-After`) from now, unless it was already
    /// told a longer one: the budget's refusal, or another (its account's pushes under way). Its
    /// pushes are held until then (`toldWaitLeft`); the budget is not charged with it.
    func tell(_ device: UUID, toWait wait: Duration, now: ContinuousClock.Instant? = nil) {
        let now = now ?? self.now()
        toldWaits.withLock { waits in
            waits[device] = max(waits[device] ?? now, now + wait)
            if waits.count > sweepAbove { waits = waits.filter { $0.value > now } }
        }
    }

    /// What is left of the longest wait `device` was told, while it runs: a request it makes
    /// now did not wait as it was told.
    func toldWaitLeft(_ device: UUID, now: ContinuousClock.Instant? = nil) -> Duration? {
        let now = now ?? self.now()
        return toldWaits.withLock { waits in
            guard let until = waits[device], now < until else { return nil }
            return until - now
        }
    }

    /// Holders whose budget is not full (for tests and the table's bound).
    var trackedHolders: Int { buckets.withLock { $0.count } }

    /// Devices whose told wait is kept (for tests and the table's bound).
    var trackedWaits: Int { toldWaits.withLock { $0.count } }

    private func refilled(_ bucket: Bucket?, now: ContinuousClock.Instant) -> Bucket {
        let burst = Double(burst)
        guard let bucket else { return Bucket(tokens: burst, updated: now) }
        let elapsed = max(0, (now - bucket.updated).inSeconds)
        return Bucket(tokens: min(burst, bucket.tokens + elapsed * perSecond), updated: now, refusedUntil: bucket.refusedUntil)
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
