import Foundation
import ShortcutSyncDomain
import Synchronization

/// The rows this process last wrote for an account's pushes, kept so that the account's next push
/// of shortcuts among them folds over them without reading them again (DESIGN §6): a push of a
/// donation this process saw lately is then one statement, the append and the fold's write.
///
/// What is kept is exact or unused. An entry holds the rows a read returned with the fold's
/// writes applied (`AccountFoldRows.written`), and the head row's mark that the write left
/// (`AccountHead.mark`). Its needs are those of the account's last pushes through this process
/// (`FoldNeeds.keeping`), up to `maximumShortcuts` shortcuts: a push whose needs are among them
/// folds over just the rows its own read would return (`AccountFoldRows.narrowed`), and a push
/// that needs more reads them with the kept needs, for the pushes after it.
///
/// The write of a push over kept rows checks that mark (`AppendFoldedStatement`): any write of
/// the account's rows since, by another push, another server, a maintenance fold, a refold, a
/// rebuild's promotion or an operator, wrote the head too and changed it, and the push then reads
/// its rows after all. Nothing else decides on kept rows alone: a push they would refuse is read
/// again before it is refused (`PostgresEventStore`).
///
/// At most `capacity` accounts are kept, each at most `maximumWeight` rows and sums: past them, one
/// kept account (whichever the table gives first) makes room, and heavier rows are not kept.
public final class FoldReadCache: Sendable {
    struct Entry: Sendable {
        /// The head as the last write left it: its versions and its mark.
        var head: AccountHead
        /// What the batches that wrote it needed: a later batch whose needs are among them folds over `rows`.
        var needs: FoldNeeds
        /// The rows `needs` reads, as the last write left them.
        var rows: AccountFoldRows
        /// The last seq of every device known at this head (the pushing device's, and those of
        /// earlier pushes through this process while the head was not written by anything else).
        var deviceSeqs: [UUID: Int64]

        /// What it holds, counted in rows and sums, so that what is kept stays small whatever an
        /// account holds: its needs' shortcuts, deletion scopes and forgets, its groups and each of
        /// their devices' sums per hour, its deletion marks, voice shortcuts and learning rules,
        /// the devices' seqs.
        var weight: Int {
            let sums = rows.groups.values.reduce(0) { total, group in
                total + 1 + group.habits.byDevice.values.reduce(0) { $0 + 1 + $1.hours.count }
            }
            let learning = rows.learning.forgotten.count + rows.learning.pauses.values.reduce(0) { $0 + $1.count } + rows.learning.signedOut.count
            let needed = needs.shortcuts.count + needs.marks.count + needs.forgottenShortcuts.count
            return needed + sums + rows.marks.count + rows.voiceShortcuts.count + learning + deviceSeqs.count
        }
    }

    /// The most rows and sums one account's entry may weigh (`Entry.weight`): a few tens of
    /// kilobytes. A push of a donation to an account of a few devices weighs about ten.
    static let maximumWeight = 256

    /// The most shortcuts one entry's needs hold: a push that needs others reads these with its
    /// own, so they bound what such a read costs (about a 16-donation batch's read).
    static let maximumShortcuts = 16

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
            guard let entry = entries[account], entry.needs.holds(needs), entry.deviceSeqs[device] == seq else { return nil }
            return entry
        }
    }

    /// What a push of `account` with these `needs` that cannot fold over kept rows reads: its
    /// needs with the kept ones, when both are of donations alone and not too many together.
    func needsToRead(of account: UUID, with needs: FoldNeeds) -> FoldNeeds {
        guard let kept = entries.withLock({ $0[account]?.needs }), let both = kept.keeping(needs),
              both.shortcuts.count <= Self.maximumShortcuts
        else { return needs }
        return both
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
    func tally(overKeptRows: Bool) {
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

extension FoldNeeds {
    /// Whether a batch with `needs` reads nothing that these needs do not, both of donations
    /// alone: every shortcut, deletion mark and forget it reads, these read too.
    func holds(_ needs: FoldNeeds) -> Bool {
        DonationReadStatement.covers(self) && DonationReadStatement.covers(needs) && needs.shortcuts.isSubset(of: shortcuts)
            && needs.marks.isSubset(of: marks) && needs.forgottenShortcuts.isSubset(of: forgottenShortcuts)
    }

    /// These needs with `needs`': what a read for both returns. Nil unless both are of donations alone.
    func keeping(_ needs: FoldNeeds) -> FoldNeeds? {
        guard DonationReadStatement.covers(self), DonationReadStatement.covers(needs) else { return nil }
        var both = self
        both.shortcuts.formUnion(needs.shortcuts)
        both.marks.formUnion(needs.marks)
        both.forgottenShortcuts.formUnion(needs.forgottenShortcuts)
        return both
    }
}

extension AccountFoldRows {
    /// Of these rows (read for needs that hold `needs`, `FoldNeeds.holds`), exactly those a read
    /// for `needs` returns: the groups of its shortcuts, its deletion marks, the voice shortcuts
    /// bound to its shortcuts, and the account's learning rules with the forgets of its shortcuts.
    func narrowed(to needs: FoldNeeds) -> AccountFoldRows {
        var rows = self
        rows.groups = groups.filter { needs.shortcuts.contains($0.key.shortcut) }
        rows.marks = marks.filter { needs.marks.contains($0.key) }
        rows.voiceShortcuts = voiceShortcuts.filter { _, voice in
            voice.target.map { needs.shortcuts.contains(ShortcutID(bundleId: $0.value.bundleId, identifier: $0.value.identifier)) } ?? false
        }
        rows.learning = learning.ofAccountAndDevices
        for (shortcut, key) in learning.forgottenShortcuts where needs.forgottenShortcuts.contains(shortcut) {
            rows.learning.add(forgotten: shortcut, at: key)
        }
        return rows
    }

    /// These rows (read for `needs`) as they are once `result`, the fold of a batch whose needs
    /// these hold, is written: what the same read would return then. Nil when `result` writes a kind of
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
