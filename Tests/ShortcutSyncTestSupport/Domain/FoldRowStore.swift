import Foundation
import ShortcutSyncDomain

/// One account's fold rows kept in memory the way the store keeps them in PostgreSQL: a batch
/// reads only the rows its `FoldNeeds` select, recounts are answered from the events folded
/// before it, and its result is written back. Folding a history batch by batch through it
/// checks the per-item fold, and what it reads, against the whole-set fold.
public struct FoldRowStore: Sendable {
    public private(set) var rows = AccountFoldRows()
    /// Every event folded so far.
    public private(set) var folded: [FoldEvent] = []
    /// The account's projected items, kept from the changes each batch reported.
    public private(set) var shortcuts: [ShortcutID: ShortcutProjection] = [:]
    public private(set) var voiceShortcuts: [UUID: VoiceShortcutView] = [:]
    /// How many recounts the batches asked for, so a test can tell that it exercised them.
    public private(set) var recounts = 0
    /// How many groups' sums the batches had counted again from the log (late learning events).
    public private(set) var resums = 0
    /// The last compaction's snapshot: the rows at its horizon.
    public private(set) var snapshot: AccountFoldRows?

    public init() {}

    /// Folds one batch as the worker does: read, fold, recount, write back.
    @discardableResult
    public mutating func fold(_ batch: [FoldEvent]) throws -> AccountBatchResult {
        var fold = AccountBatchFold(before: read(FoldNeeds(events: batch)))
        for event in batch { fold.apply(event) }
        var covered: [DonationGroupID: Int] = [:]
        var coveredEligible: [DonationGroupID: [LoggedDonation]] = [:]
        var forgotten: [ShortcutID: EventKey] = [:]
        for recount in fold.recounts {
            let donations = self.covered(recount)
            covered[recount.group] = donations.count
            coveredEligible[recount.group] = donations.compactMap { event in event.habit.map { LoggedDonation(key: event.key, habit: $0) } }
            if let key = rows.learning.forgottenShortcuts[recount.group.shortcut] { forgotten[recount.group.shortcut] = key }
            recounts += 1
        }
        var resummed: [DonationGroupID: [LoggedDonation]] = [:]
        for resum in fold.resums {
            resummed[resum.group] = folded.compactMap { event in
                guard case .donation(let shortcut, let group) = event.change, DonationGroupID(shortcut: shortcut, group: group) == resum.group,
                      resum.from.map({ event.key >= $0 }) ?? true, let habit = event.habit else { return nil }
                return LoggedDonation(key: event.key, habit: habit)
            }
            if let key = rows.learning.forgottenShortcuts[resum.group.shortcut] { forgotten[resum.group.shortcut] = key }
            resums += 1
        }
        let result = try fold.finish(covered: covered, coveredEligible: coveredEligible, resummed: resummed, forgottenShortcuts: forgotten)
        rows.store(result)
        // The log holds an event older than the horizon at the clock it was folded at.
        folded += batch.map { rows.horizon.effective($0) }
        for (id, projection) in result.shortcuts { shortcuts[id] = projection }
        for change in result.voiceShortcuts where change.viewChanged { voiceShortcuts[change.row.id] = change.row.view }
        return result
    }

    /// Compacts the account through `version` as the store does (`AccountHorizon`): the snapshot
    /// is the fold, in one batch, of the events up to `version` over the last snapshot, with every
    /// donation it counts compacted; the rows become the fold, in one batch, of the later events
    /// over it; the log keeps only those. Nil (and nothing changed) when no event is that old, or
    /// when a later one has a smaller key: the store compacts only through such a clean cut.
    @discardableResult
    public mutating func compact(through version: Int64) throws -> AccountHorizon? {
        let gone = folded.filter { $0.version <= version }, kept = folded.filter { $0.version > version }
        guard let key = gone.map(\.key).max(), kept.allSatisfy({ $0.key > key }) else { return nil }
        let horizon = AccountHorizon(version: version, key: key)
        var snapshot = FoldRowStore(snapshot: self.snapshot ?? AccountFoldRows())
        try snapshot.fold(gone)
        let compacted = snapshot.rows.compacted(through: horizon)
        var live = FoldRowStore(snapshot: compacted)
        if !kept.isEmpty { try live.fold(kept) }
        self.snapshot = compacted
        rows = live.rows
        folded = kept
        return horizon
    }

    /// A store that starts from a compaction's snapshot, its log empty (a rebuild starts so).
    public init(snapshot rows: AccountFoldRows) {
        self.rows = rows
    }

    /// The rows `needs` selects, as the store's queries select them.
    public func read(_ needs: FoldNeeds) -> AccountFoldRows {
        var needs = needs
        // A sign-out reads every group: the store reads every group of each app the account has.
        if needs.everyGroup { needs.bundles.formUnion(rows.groups.keys.map(\.shortcut.bundleId)) }
        var selected = AccountFoldRows()
        selected.version = rows.version
        selected.maxHLC = rows.maxHLC
        selected.shortcutCount = rows.shortcutCount
        selected.horizon = rows.horizon
        let inGroups = Set(rows.groups.keys.filter {
            needs.shortcutsInGroups.contains(FoldNeeds.AppGroup(bundleId: $0.shortcut.bundleId, group: $0.group))
        }.map(\.shortcut))
        selected.groups = rows.groups.filter { id, _ in
            needs.shortcuts.contains(id.shortcut) || inGroups.contains(id.shortcut) || needs.bundles.contains(id.shortcut.bundleId)
        }
        selected.marks = rows.marks.filter { needs.marks.contains($0.key) }
        let phrases = needs.phrases.union(needs.voiceShortcuts.compactMap { rows.voiceShortcuts[$0]?.normalizedPhrase })
        selected.voiceShortcuts = rows.voiceShortcuts.filter { id, row in
            needs.voiceShortcuts.contains(id)
                || row.normalizedPhrase.map(phrases.contains) ?? false
                || row.targetShortcut.map { needs.shortcuts.contains($0) || needs.voiceTargetBundles.contains($0.bundleId) } ?? false
        }
        selected.devices = rows.devices.filter { needs.devices.contains($0.key) }
        // The account's row holds the account's and devices' rules; shortcuts' forgets are marks.
        selected.learning = rows.learning.ofAccountAndDevices
        for (shortcut, key) in rows.learning.forgottenShortcuts where needs.forgottenShortcuts.contains(shortcut) {
            selected.learning.add(forgotten: shortcut, at: key)
        }
        return selected
    }

    /// Donations folded before the batch that the recount's range holds, as the log answers.
    private func covered(_ recount: AccountBatchFold.Recount) -> [FoldEvent] {
        folded.filter { event in
            guard case .donation(let shortcut, let group) = event.change,
                  DonationGroupID(shortcut: shortcut, group: group) == recount.group else { return false }
            return recount.from.map { event.key >= $0 } ?? true && event.key < recount.to
        }
    }
}

extension AccountFoldRows {
    /// These rows with a batch's result written back, as `ProjectionRowStore.write` writes it.
    mutating func store(_ result: AccountBatchResult) {
        version = result.version
        maxHLC = result.maxHLC
        shortcutCount = result.shortcutCount
        for (id, row) in result.groups { groups[id] = row }
        for (scope, key) in result.marks { marks[scope] = key }
        for change in result.voiceShortcuts { voiceShortcuts[change.row.id] = change.row }
        for (device, change) in result.devices { devices[device] = change.reported }
        var rules = result.learning ?? learning.ofAccountAndDevices
        for (shortcut, key) in learning.forgottenShortcuts.merging(result.forgottenShortcuts, uniquingKeysWith: max) {
            rules.add(forgotten: shortcut, at: key)
        }
        learning = rules
    }
}
