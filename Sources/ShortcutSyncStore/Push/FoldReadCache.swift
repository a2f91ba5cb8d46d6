import Foundation
import ShortcutSyncDomain
import Synchronization

/// The rows this process last wrote for an account's push, kept so that the account's next push
/// of the same shortcuts folds over them without reading them again (DESIGN §6): a push of a
/// donation this process saw last is then one statement, the append and the fold's write.
///
/// What is kept is exact or unused. An entry holds the rows the read returned for the push's
/// needs with the fold's writes applied (`AccountFoldRows.written`), and the head row's mark that
/// the write left (`AccountHead.mark`). The write of the next push checks that mark
/// (`AppendFoldedStatement`): any write of the account's rows since, by another push, another
/// server, a maintenance fold, a refold, a rebuild's promotion or an operator, wrote the head too
/// and changed it, and the push then reads its rows after all. Nothing else decides on kept rows
/// alone: a push they would refuse is read again before it is refused (`PostgresEventStore`).
///
/// At most `capacity` accounts are kept, each at most `maximumWeight` rows and sums: past them, one
/// kept account (whichever the table gives first) makes room, and heavier rows are not kept.
public final class FoldReadCache: Sendable {
    struct Entry: Sendable {
        /// The head as the last write left it: its versions and its mark.
        var head: AccountHead
        /// What the batch that wrote it needed: a later batch with the same needs reads `rows`.
        var needs: FoldNeeds
        /// The rows `needs` reads, as that write left them.
        var rows: AccountFoldRows
        /// The last seq of every device known at this head (the pushing device's, and those of
        /// earlier pushes through this process while the head was not written by anything else).
        var deviceSeqs: [UUID: Int64]

        /// What it holds, counted in rows and sums, so that what is kept stays small whatever an
        /// account holds: its needs' shortcuts, its groups and each of their devices' sums per
        /// hour, its deletion marks, voice shortcuts and learning rules, the devices' seqs.
        var weight: Int {
            let sums = rows.groups.values.reduce(0) { total, group in
                total + 1 + group.habits.byDevice.values.reduce(0) { $0 + 1 + $1.hours.count }
            }
            let learning = rows.learning.forgotten.count + rows.learning.pauses.values.reduce(0) { $0 + $1.count } + rows.learning.signedOut.count
            return needs.shortcuts.count + sums + rows.marks.count + rows.voiceShortcuts.count + learning + deviceSeqs.count
        }
    }

    /// The most rows and sums one account's entry may weigh (`Entry.weight`): a few tens of
    /// kilobytes. A push of a donation to an account of a few devices weighs about ten.
    static let maximumWeight = 256

    public let capacity: Int
    private let entries = Mutex<[UUID: Entry]>([:])
    private let counts = Mutex<(kept: Int, read: Int)>((0, 0))

    /// Accounts kept unless told otherwise: a few megabytes for donations to accounts of a few
    /// devices, below a hundred at most (`maximumWeight`).
    public static let defaultCapacity = 4_096

    public init(capacity: Int = defaultCapacity) {
        precondition(capacity > 0, "a cache keeps at least one account")
        self.capacity = capacity
    }

    /// The kept rows of `account` for a batch with these `needs` that `device` pushes after its
    /// seq `seq`; nil when none are kept for them (the push then reads).
    func rows(of account: UUID, needs: FoldNeeds, device: UUID, after seq: Int64) -> Entry? {
        entries.withLock { entries -> Entry? in
            guard let entry = entries[account], entry.needs == needs, entry.deviceSeqs[device] == seq else { return nil }
            return entry
        }
    }

    /// The devices' last seqs kept for `account` at the head `mark`: still true when a read finds
    /// the head as this process's last write left it.
    func deviceSeqs(of account: UUID, at mark: String) -> [UUID: Int64] {
        entries.withLock { entries in
            guard let entry = entries[account], entry.head.mark == mark else { return [:] }
            return entry.deviceSeqs
        }
    }

    /// What is kept for `account`, whatever its needs.
    func entry(of account: UUID) -> Entry? {
        entries.withLock { $0[account] }
    }

    func keep(_ entry: Entry, for account: UUID) {
        guard entry.weight <= Self.maximumWeight else { return forget(account) }
        entries.withLock { entries in
            if entries[account] == nil, entries.count >= capacity, let any = entries.keys.first {
                entries[any] = nil
            }
            entries[account] = entry
        }
    }

    func forget(_ account: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: account) }
    }

    /// Counts a push written: over kept rows, or over rows it read.
    func count(overKeptRows: Bool) {
        counts.withLock { overKeptRows ? ($0.kept += 1) : ($0.read += 1) }
    }

    /// How many pushes were written over kept rows, and how many over rows they read, since this
    /// cache was made.
    public var uses: (kept: Int, read: Int) {
        counts.withLock { $0 }
    }

    /// How many accounts are kept.
    public var count: Int {
        entries.withLock { $0.count }
    }
}

extension AccountFoldRows {
    /// These rows (read for `needs`) as they are once `result`, the fold of a batch with those
    /// needs, is written: what the same read would return then. Nil when `result` writes a kind of
    /// row this does not follow (deletion marks, forgets, voice shortcuts, devices, the learning
    /// rules) or groups of shortcuts the read does not look up, or `needs` reads more than a
    /// batch of donations does: such rows are read again at the next push.
    func written(_ result: AccountBatchResult, needs: FoldNeeds) -> AccountFoldRows? {
        guard DonationReadStatement.covers(needs), result.marks.isEmpty, result.forgottenShortcuts.isEmpty,
              result.voiceShortcuts.isEmpty, result.devices.isEmpty, result.learning == nil,
              result.groups.keys.allSatisfy({ needs.shortcuts.contains($0.shortcut) })
        else { return nil }
        var rows = self
        // The account's row as the `account` arm writes it.
        rows.version = result.version
        rows.maxHLC = result.maxHLC
        rows.shortcutCount = result.shortcutCount
        // The groups as `kept_groups` writes them and `gone_groups` deletes them.
        for (id, group) in result.groups {
            rows.groups[id] = group
        }
        return rows
    }
}
