import Foundation
import NIOCore
import ShortcutSyncDomain
import Synchronization

/// The candidates of a device's last suggestions request (their decoded sums), kept by the
/// server until its account's rows change: a device that asks again before its account changes
/// (the person looks at the screen twice an hour, the sums decay by the clock alone) is answered
/// without reading and decoding a thousand rows again (issue 67: the read and its decoding were
/// most of a request's time at 1,000 shortcuts).
///
/// An entry is valid at its head's mark (`AccountHead.mark`): every write of an account's rows
/// writes its head in the same transaction, also those that keep its versions (a maintenance
/// fold, a rebuild's promotion, a compaction), and the mark of a head written on another
/// timeline (a failover, a restored backup) is not one kept from before. A request's statement
/// is given the kept mark, reads the sums only when the head's is another, and the request takes
/// the entry only when it is the same. What is kept is bounded by weight
/// (`weight(of:)`: shortcuts, devices and sums), the least recently asked for going first, in
/// time that does not grow with what is kept.
public final class SuggestionCandidateCache: Sendable {
    struct Key: Hashable, Sendable {
        var account: UUID
        var device: UUID
        /// The request's bounds (`suggestionInputs`' `candidates` and `reach`).
        var candidates: Int
        var reach: Int
    }

    struct Entry: Sendable {
        var mark: String
        var candidates: [ShortcutID: ShortcutHabits]
        var weight: Int
        /// When it was last asked for, as `tick` counts.
        var used: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var weight = 0
        var tick: UInt64 = 0
        var kept = 0
        var read = 0
        /// Each entry's key with the tick it was last asked for at, oldest first: a key asked for
        /// again is added again at the end, and a place of it whose tick is not its entry's
        /// `used` (or of an entry gone) is passed by. Room is made from the front, so that
        /// making it costs what it lets go, not a look at every entry.
        var order = CircularBuffer<(tick: UInt64, key: Key)>()

        /// Marks `key` (kept) as asked for now.
        mutating func use(_ key: Key) {
            tick &+= 1
            entries[key]?.used = tick
            order.append((tick, key))
            // The places passed by are dropped once they outnumber the entries: a copy of the
            // live ones, in order, for every as many asks as there are entries.
            if order.count > 2 * entries.count + 64 {
                order = CircularBuffer(entries.map { (tick: $0.value.used, key: $0.key) }.sorted { $0.tick < $1.tick })
            }
        }

        /// Lets the least recently asked for go until `weight` more fits in `capacity`.
        mutating func makeRoom(for needed: Int, in capacity: Int) {
            while self.weight + needed > capacity, let (tick, key) = order.popFirst() {
                guard let entry = entries[key], entry.used == tick else { continue }
                entries[key] = nil
                self.weight -= entry.weight
            }
        }
    }

    /// The most weight kept together; an entry heavier than a quarter of it is not kept.
    public let capacity: Int
    private let state = Mutex(State())

    /// About a dozen accounts of 1,000 shortcuts on two devices, some tens of megabytes at most.
    public static let defaultCapacity = 200_000

    public init(capacity: Int = defaultCapacity) {
        precondition(capacity > 0, "a cache keeps something")
        self.capacity = capacity
    }

    /// What a request's candidates weigh: one for each shortcut, device and sum.
    public static func weight(of candidates: [ShortcutID: ShortcutHabits]) -> Int {
        candidates.values.reduce(0) { total, habits in
            habits.byDevice.values.reduce(total + 1) { $0 + 1 + $1.hours.count + $1.places.count }
        }
    }

    /// What is kept for `key`: the candidates and the head's mark they were read at.
    func entry(for key: Key) -> (mark: String, candidates: [ShortcutID: ShortcutHabits])? {
        state.withLock { state in state.entries[key].map { ($0.mark, $0.candidates) } }
    }

    /// Counts a request that took what is kept for `key` (its head had the same mark), now its
    /// most recently asked for.
    func took(_ key: Key) {
        state.withLock { state in
            state.kept += 1
            guard state.entries[key] != nil else { return }
            state.use(key)
        }
    }

    /// Keeps what a request read at the head `mark`, making room by letting the least recently
    /// asked for go.
    func keep(_ candidates: [ShortcutID: ShortcutHabits], for key: Key, at mark: String) {
        let weight = Self.weight(of: candidates)
        state.withLock { state in
            state.read += 1
            if let old = state.entries.removeValue(forKey: key) { state.weight -= old.weight }
            guard weight <= capacity / 4 else { return }
            state.makeRoom(for: weight, in: capacity)
            state.entries[key] = Entry(mark: mark, candidates: candidates, weight: weight, used: 0)
            state.weight += weight
            state.use(key)
        }
    }

    /// How many requests took kept candidates, and how many read them, since this cache was made.
    public var uses: (kept: Int, read: Int) {
        state.withLock { ($0.kept, $0.read) }
    }

    /// How much is kept: entries and their weight.
    public var size: (entries: Int, weight: Int) {
        state.withLock { ($0.entries.count, $0.weight) }
    }

    /// How many places the order of asking holds, those passed by included.
    var placesInOrder: Int {
        state.withLock { $0.order.count }
    }
}
