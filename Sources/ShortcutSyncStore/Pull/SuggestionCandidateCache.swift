import Foundation
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
/// (`weight(of:)`: shortcuts, devices and sums), the least recently asked for going first.
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
            state.tick &+= 1
            state.entries[key]?.used = state.tick
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
            while state.weight + weight > capacity, let oldest = state.entries.min(by: { $0.value.used < $1.value.used }) {
                state.entries[oldest.key] = nil
                state.weight -= oldest.value.weight
            }
            state.tick &+= 1
            state.entries[key] = Entry(mark: mark, candidates: candidates, weight: weight, used: state.tick)
            state.weight += weight
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
}
