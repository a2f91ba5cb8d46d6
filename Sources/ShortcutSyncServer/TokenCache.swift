import Foundation
import Synchronization

/// The callers of tokens looked up lately, so that a device's next request costs a hash, not a
/// query: pushes and pulls save a round trip, and a device pushing far over its budget is
/// refused without touching the database (issue 19: a runaway cannot starve the others).
///
/// A token stops working at once when its device is signed out or its account erased: the hub
/// forgets its entries then (`NotificationHub.endSessions`), on this server at once and on the
/// others when they hear the `NOTIFY`; everything is forgotten when LISTEN resumes after an
/// outage (what was notified meanwhile is lost), and an entry is looked up again after
/// `lifetime` whatever happens. It holds at most `capacity` entries.
public final class TokenCache: Sendable {
    private struct Entry {
        var caller: Caller
        var checkedAt: ContinuousClock.Instant
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// Hashes of tokens the database did not know, and when it said so: a token is made here
        /// and shown once its row is committed, so one unknown stays unknown. Bounded like `entries`.
        var unknown: [[UInt8]: ContinuousClock.Instant] = [:]
        /// Lookups of the database under way (`beginLookup`).
        var lookups = 0
        /// Moves with every forgetting: a lookup that began before one is not kept, since the
        /// database may have answered it before the sign-out.
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    let lifetime: Duration
    let capacity: Int

    init(lifetime: Duration = .seconds(30), capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The caller of the token with this hash, if it was looked up within `lifetime`.
    func caller(tokenHash: [UInt8], now: ContinuousClock.Instant = .now) -> Caller? {
        state.withLock { state in
            guard let entry = state.entries[tokenHash] else { return nil }
            guard now - entry.checkedAt < lifetime else {
                state.entries[tokenHash] = nil
                return nil
            }
            return entry.caller
        }
    }

    /// Taken before a lookup and given back to `remember`.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps what the database said of this token in a lookup that began at `generation`, unless
    /// something was forgotten since. At capacity, the expired entries go first, and all of them
    /// if none has expired (a cache, never a growing table).
    func remember(_ caller: Caller, tokenHash: [UInt8], lookedUpAt generation: UInt64, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard state.generation == generation else { return }
            makeRoom(in: &state.entries, now: now) { $0.checkedAt }
            state.entries[tokenHash] = Entry(caller: caller, checkedAt: now)
        }
    }

    /// Whether the database said lately (within `lifetime`) that it knows no token with this hash.
    func isKnownUnknown(tokenHash: [UInt8], now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard let at = state.unknown[tokenHash] else { return false }
            guard now - at < lifetime else {
                state.unknown[tokenHash] = nil
                return false
            }
            return true
        }
    }

    /// Keeps that the database knows no token with this hash. At capacity, the expired go first,
    /// and all of them if none has expired.
    func rememberUnknown(tokenHash: [UInt8], now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            makeRoom(in: &state.unknown, now: now) { $0 }
            state.unknown[tokenHash] = now
        }
    }

    /// The most lookups of the database under way at once; past it a request with a token not
    /// in the cache waits for a place (`waitForLookup`), at most `lookupWait`, and is then
    /// answered 503 with Retry-After instead of queueing for the pool without bound.
    static let maximumLookups = 32
    static let lookupWait: Duration = .seconds(2)

    /// Takes a place for a lookup, waiting for one (polling every few milliseconds) up to
    /// `lookupWait`; false when none came free in that time. Give it back with `endLookup()`.
    func waitForLookup() async -> Bool {
        let deadline = ContinuousClock.now + Self.lookupWait
        while !beginLookup() {
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(5))) != nil else { return false }
        }
        return true
    }

    /// Takes a place for a lookup of the database; false when `maximumLookups` are under way.
    /// Give it back with `endLookup()`.
    func beginLookup() -> Bool {
        state.withLock { state in
            guard state.lookups < Self.maximumLookups else { return false }
            state.lookups += 1
            return true
        }
    }

    func endLookup() {
        state.withLock { $0.lookups -= 1 }
    }

    /// At capacity, drops the expired entries of `table`, and all of them if none has expired:
    /// a cache, never a growing table.
    private func makeRoom<Value>(in table: inout [[UInt8]: Value], now: ContinuousClock.Instant, checkedAt: (Value) -> ContinuousClock.Instant) {
        guard table.count >= capacity else { return }
        table = table.filter { now - checkedAt($0.value) < lifetime }
        if table.count >= capacity { table.removeAll() }
    }

    /// The device was signed out: its token works no more.
    func forget(device: UUID) {
        state.withLock { state in
            state.generation += 1
            state.entries = state.entries.filter {
                if case .device(device, _) = $0.value.caller { return false }
                return true
            }
        }
    }

    /// The account was erased: none of its tokens works any more.
    func forget(account: UUID) {
        state.withLock { state in
            state.generation += 1
            state.entries = state.entries.filter {
                switch $0.value.caller {
                case .account(account), .device(_, account): false
                default: true
                }
            }
        }
    }

    /// Sign-outs may have been missed (LISTEN was down): every token is looked up again.
    func forgetAll() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
