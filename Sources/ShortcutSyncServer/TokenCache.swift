import Foundation
import Synchronization

/// The callers of tokens looked up lately, so that a device's next request costs a hash, not a
/// query: pushes and pulls save a round trip, and a device pushing far over its budget is
/// refused without touching the database (issue 19: a runaway cannot starve the others).
///
/// A token stops working at once when its device is signed out or its account erased: the hub
/// forgets its entries then (`NotificationHub.endSessions`), on this server at once and on the
/// others when they hear the `NOTIFY`; when LISTEN resumes after an outage (what was notified
/// meanwhile is lost) every entry is checked against the database at once, in bulk, and
/// whatever it no longer knows is forgotten (`distrust`); an entry is looked up again after
/// `lifetime` whatever happens. It holds at most `capacity` entries.
public final class TokenCache: Sendable {
    private struct Entry {
        var caller: Caller
        var checkedAt: ContinuousClock.Instant
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// The hashes kept of each device's token, and of each account's tokens (its own and its
        /// devices'): forgetting one device or account touches its entries alone (issue 56: a
        /// sign-out used to rebuild the whole table under the lock every request takes).
        var byDevice: [UUID: Set<[UInt8]>] = [:]
        var byAccount: [UUID: Set<[UInt8]>] = [:]
        /// Hashes of tokens the database did not know, and when it said so: a token is made here
        /// and shown once its row is committed, so one unknown stays unknown. Bounded like `entries`.
        var unknown: [[UInt8]: ContinuousClock.Instant] = [:]
        /// Lookups of the database under way (`beginLookup`).
        var lookups = 0
        /// Moves with every forgetting; a lookup takes it as it begins (`generation`).
        var generation: UInt64 = 0
        /// The devices and accounts forgotten lately, with the generation each was forgotten at
        /// (the latest), so that a lookup that began before a forgetting is not kept if it is of
        /// what was forgotten — and is kept if it is of anything else. The same, in the order
        /// they were forgotten (`forgets[forgetsStart...]`), so that the oldest go first.
        var forgottenAt: [UUID: UInt64] = [:]
        var forgets: [(generation: UInt64, id: UUID)] = []
        var forgetsStart = 0
        /// Lookups that began before this generation are not kept: what was forgotten before it
        /// is no longer recorded (the record holds the last `forgetsKept`), or all was forgotten.
        var floor: UInt64 = 0
    }
    private let state = Mutex(State())
    let lifetime: Duration
    let capacity: Int

    /// How many forgettings are recorded for lookups under way: a lookup takes milliseconds, and
    /// one that saw more than this many forgettings go by is looked up again next time.
    let forgetsKept: Int

    init(lifetime: Duration = .seconds(30), capacity: Int = 100_000, forgetsKept: Int = 4_096) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.forgetsKept = forgetsKept
    }

    /// The caller of the token with this hash, if it was looked up within `lifetime`.
    func caller(tokenHash: [UInt8], now: ContinuousClock.Instant = .now) -> Caller? {
        state.withLock { state in
            guard let entry = state.entries[tokenHash] else { return nil }
            guard now - entry.checkedAt < lifetime else {
                Self.remove(tokenHash, from: &state)
                return nil
            }
            return entry.caller
        }
    }

    /// Taken before a lookup and given back to `remember`.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps what the database said of this token in a lookup that began at `generation`, unless
    /// its device or account was forgotten since (the database may have answered before the
    /// sign-out committed); a forgetting of another device does not stop it being kept. At
    /// capacity, the expired entries go first, and all of them if none has expired (a cache,
    /// never a growing table).
    func remember(_ caller: Caller, tokenHash: [UInt8], lookedUpAt generation: UInt64, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard generation >= state.floor else { return }
            for id in Self.owners(of: caller) {
                if let forgotten = state.forgottenAt[id], forgotten > generation { return }
            }
            if state.entries.count >= capacity {
                state.entries = state.entries.filter { now - $0.value.checkedAt < lifetime }
                if state.entries.count >= capacity { state.entries.removeAll() }
                Self.reindex(&state)
            }
            Self.remove(tokenHash, from: &state)
            state.entries[tokenHash] = Entry(caller: caller, checkedAt: now)
            Self.index(tokenHash, of: caller, in: &state)
        }
    }

    /// The device and account a caller's token answers for: what forgetting either ends.
    private static func owners(of caller: Caller) -> [UUID] {
        switch caller {
        case .device(let device, let account): [device, account]
        case .account(let account): [account]
        case .admin: []
        }
    }

    /// Takes one entry out of the table and its indexes.
    private static func remove(_ tokenHash: [UInt8], from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: tokenHash) else { return }
        switch entry.caller {
        case .device(let device, let account):
            unindex(tokenHash, under: device, in: &state.byDevice)
            unindex(tokenHash, under: account, in: &state.byAccount)
        case .account(let account):
            unindex(tokenHash, under: account, in: &state.byAccount)
        case .admin:
            break
        }
    }

    private static func unindex(_ tokenHash: [UInt8], under id: UUID, in index: inout [UUID: Set<[UInt8]>]) {
        guard var hashes = index[id] else { return }
        hashes.remove(tokenHash)
        index[id] = hashes.isEmpty ? nil : hashes
    }

    /// Makes the indexes again from the entries, after the table was swept at capacity (rare).
    private static func reindex(_ state: inout State) {
        state.byDevice = [:]
        state.byAccount = [:]
        for (hash, entry) in state.entries { index(hash, of: entry.caller, in: &state) }
    }

    /// Files a kept hash under its device and its account.
    private static func index(_ tokenHash: [UInt8], of caller: Caller, in state: inout State) {
        switch caller {
        case .device(let device, let account):
            state.byDevice[device, default: []].insert(tokenHash)
            state.byAccount[account, default: []].insert(tokenHash)
        case .account(let account):
            state.byAccount[account, default: []].insert(tokenHash)
        case .admin:
            break
        }
    }

    /// Records that `id` (a device or an account) was forgotten at a new generation, dropping the
    /// oldest record past `forgetsKept` (lookups older than it are then not kept at all).
    private func recordForgetting(_ id: UUID, in state: inout State) {
        state.generation += 1
        state.forgottenAt[id] = state.generation
        state.forgets.append((state.generation, id))
        while state.forgets.count - state.forgetsStart > forgetsKept {
            let oldest = state.forgets[state.forgetsStart]
            state.forgetsStart += 1
            if state.forgottenAt[oldest.id] == oldest.generation { state.forgottenAt[oldest.id] = nil }
            state.floor = oldest.generation
        }
        // The array's head is given back now and then, never one element at a time.
        if state.forgetsStart >= forgetsKept {
            state.forgets.removeFirst(state.forgetsStart)
            state.forgetsStart = 0
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

    /// At capacity, drops the expired entries of `table` (the unknown tokens'), and all of them
    /// if none has expired: a cache, never a growing table.
    private func makeRoom<Value>(in table: inout [[UInt8]: Value], now: ContinuousClock.Instant, checkedAt: (Value) -> ContinuousClock.Instant) {
        guard table.count >= capacity else { return }
        table = table.filter { now - checkedAt($0.value) < lifetime }
        if table.count >= capacity { table.removeAll() }
    }

    /// The device was signed out: its token works no more. Costs that device's entries, not the
    /// table's (issue 56), and a lookup under way of another device's token is still kept.
    func forget(device: UUID) {
        state.withLock { state in
            recordForgetting(device, in: &state)
            for hash in state.byDevice[device] ?? [] { Self.remove(hash, from: &state) }
        }
    }

    /// The account was erased, or its token rotated: none of its tokens works any more.
    func forget(account: UUID) {
        state.withLock { state in
            recordForgetting(account, in: &state)
            for hash in state.byAccount[account] ?? [] { Self.remove(hash, from: &state) }
        }
    }

    /// Sign-outs may have been missed (LISTEN was down): every token is looked up again, and no
    /// lookup under way is kept.
    func forgetAll() {
        state.withLock { state in
            Self.keepNoLookupUnderWay(&state)
            state.entries.removeAll()
            state.byDevice = [:]
            state.byAccount = [:]
        }
    }

    /// Sign-outs may have been missed (a `LISTEN` was down), but most tokens are still good: no
    /// lookup under way is kept (it may have read before a sign-out it will not hear of), and
    /// the hashes kept of devices' and accounts' tokens are returned, to be checked against the database in bulk (`keep(only:among:)`)
    /// rather than each looked up again by its next request — after a node of a cluster flaps,
    /// every device's next request would otherwise be a lookup at once (issue 65, item 9).
    func distrust() -> [[UInt8]] {
        state.withLock { state in
            Self.keepNoLookupUnderWay(&state)
            return state.entries.compactMap { hash, entry in
                if case .admin = entry.caller { return nil }
                return hash
            }
        }
    }

    /// Of the `checked` hashes (those `distrust` returned), drops the ones not in `valid`: the
    /// database no longer knows them (the device signed out, the account erased or its token
    /// rotated). An entry looked up again since is dropped too if the check found it gone.
    func keep(only valid: Set<[UInt8]>, among checked: [[UInt8]]) {
        state.withLock { state in
            for hash in checked where !valid.contains(hash) { Self.remove(hash, from: &state) }
        }
    }

    /// A new generation that no lookup begun before it reaches (`remember`); the record of
    /// forgettings is then of no use.
    private static func keepNoLookupUnderWay(_ state: inout State) {
        state.generation += 1
        state.floor = state.generation
        state.forgottenAt = [:]
        state.forgets = []
        state.forgetsStart = 0
    }

    var count: Int { state.withLock { $0.entries.count } }
}
