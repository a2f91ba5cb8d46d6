import Foundation

/// The merge rules of DESIGN §3 applied to one batch of one account's events, on the stored rows
/// the batch touches (`FoldNeeds`), giving the rows to write back and the projected items that changed.
///
/// The outcome depends only on the rows before and the *set* of the batch's events, never on
/// their order within the batch. Donations of the batch are kept by key until the batch ends
/// (a later event of the batch may be an older deletion that covers them); donations of earlier
/// batches are only counted. When a deletion of this batch lands among an earlier batch's
/// donations (below the latest of them, above the group's old coverage), how many it covers is
/// a question for the log: `recounts` asks it and `finish(covered:)` takes the answers.
///
/// Learning events (forgets, pauses, resumes, sign-outs) change which donations teach the
/// suggestions (`LearningRules`), never the view. One newer than every donation of a group
/// (the common case: the person asks now) changes the group's sums at once: a forget clears its
/// scope's part (a place's forget, the place's weights alone), a pause or resume changes nothing already there. One that lands among a group's
/// donations (a device that was offline) has the group's sums counted again from the log, each
/// donation held to the rules after the batch: `resums` asks, `finish(resummed:)` takes the answers.
///
/// `AccountState` folds the same rules over a whole set of events; tests prove the two agree.
public struct AccountBatchFold: Sendable {
    /// A donation of this batch not covered (yet).
    struct BatchDonation: Sendable, Hashable, Comparable {
        var key: EventKey
        /// Its account version: the event whose attributes the shortcut shows when it is the latest.
        var version: Int64
        /// What it teaches the suggestions (not part of its identity).
        var habit: HabitDonation? = nil
        // Keys are unique in the log: the key alone identifies the donation.
        static func < (lhs: BatchDonation, rhs: BatchDonation) -> Bool { lhs.key < rhs.key }
        static func == (lhs: BatchDonation, rhs: BatchDonation) -> Bool { lhs.key == rhs.key }
        func hash(into hasher: inout Hasher) { hasher.combine(key) }
    }

    /// The donations the log has to count for `group`: earlier batches' donations with keys in
    /// `from..<to` (from nil: no lower bound), all of which this batch's deletions cover. Only
    /// those the log still holds, past the account's horizon: the compacted ones are the row's.
    public struct Recount: Sendable, Hashable {
        public var group: DonationGroupID
        public var from: EventKey?
        public var to: EventKey
    }

    /// A donation group whose suggestion sums the log has to count again: every donation eligible
    /// for prediction of `group` with a key at or above `from` (nil: any), folded before the batch
    /// and past the account's horizon (the compacted ones are the row's).
    public struct Resum: Sendable, Hashable {
        public var group: DonationGroupID
        public var from: EventKey?
    }

    /// One learning event of the batch that changed the rules.
    struct LearningChange: Sendable, Hashable {
        var scope: LearningScope
        var key: EventKey
        var forget: Bool
    }

    public let before: AccountFoldRows
    private var marks: [DeletionScope: EventKey]
    private var voiceShortcuts: [UUID: VoiceShortcutRow]
    private var devices: [UUID: Stamped<Set<String>>]
    private var maxHLC: HLCTimestamp
    private var lastVersion: Int64 = 0
    /// Uncovered donations of the batch by app, identifier and group, ascending by key.
    private var donations: [String: [String: [String: [BatchDonation]]]] = [:]
    /// Shortcuts every donation group of which is among the rows: their existence is known.
    private var knownShortcuts: Set<ShortcutID>
    private var touchedVoiceShortcuts: Set<UUID> = []
    /// Normalized phrases known already (`FoldNeeds.normalizedPhrases`), and those of the batch's
    /// events as they come (`remember`).
    private var normalizedPhrases: [String: String]
    /// Thresholds looked up since the last deletion of the batch (which may raise any of them).
    private var thresholds: [DonationGroupID: EventKey?] = [:]
    /// Devices signed out in the batch: their sums leave every group (all of which were read).
    /// A signed-out device's sign-out is its last event, so no donation of it comes later.
    private var signedOut: Set<UUID> = []
    /// The learning rules with the batch's learning events.
    private var rules: LearningRules
    private var learningChanges: [LearningChange] = []
    /// Whether an event of the batch was older than the horizon.
    private var late = false

    public init(before: AccountFoldRows, normalizedPhrases: [String: String] = [:]) {
        self.before = before
        self.normalizedPhrases = normalizedPhrases
        marks = before.marks
        voiceShortcuts = before.voiceShortcuts
        devices = before.devices
        rules = before.learning
        maxHLC = before.maxHLC
        knownShortcuts = Set(before.groups.keys.map(\.shortcut))
    }

    /// Folds one more event of the batch in.
    public mutating func apply(_ event: FoldEvent) {
        // An event older than the horizon is folded just after it (`AccountHorizon`).
        if let horizon = before.horizon, event.key <= horizon.key { late = true }
        let event = before.horizon.effective(event)
        let key = event.key
        maxHLC = max(maxHLC, key.hlc)
        lastVersion = max(lastVersion, event.version)
        switch event.change {
        case .donation(let shortcut, let group):
            knownShortcuts.insert(shortcut)
            let id = DonationGroupID(shortcut: shortcut, group: group)
            let threshold: EventKey?
            if let known = thresholds[id] {
                threshold = known
            } else {
                threshold = self.threshold(of: id)
                thresholds[id] = .some(threshold)
            }
            if let threshold, key < threshold { return }
            donations[shortcut.bundleId, default: [:]][shortcut.identifier, default: [:]][group, default: []]
                .insertKeepingOrder(BatchDonation(key: key, version: event.version, habit: event.habit))
        case .deletion(let deletion):
            thresholds.removeAll(keepingCapacity: true)
            for scope in DeletionScope.raised(by: deletion) {
                marks[scope] = max(marks[scope] ?? key, key)
                cover(scope, below: key)
                if case .identifier(let shortcut) = scope { knownShortcuts.insert(shortcut) }
            }
        case .voiceShortcutAdded(let added):
            knownShortcuts.insert(ShortcutID(bundleId: added.bundleId, identifier: added.identifier))
            remember(added.phrase)
            let normalizedPhrases = normalizedPhrases
            updateVoiceShortcut(added.voiceShortcutId) { row in
                row.target.keepLatest(Stamped(key: key, value: VoiceShortcutTarget(added)))
                row.setPhrase(Stamped(key: key, value: added.phrase), normalized: normalizedPhrases)
            }
        case .voiceShortcutUpdated(let updated):
            remember(updated.phrase)
            let normalizedPhrases = normalizedPhrases
            updateVoiceShortcut(updated.voiceShortcutId) { row in
                row.setPhrase(Stamped(key: key, value: updated.phrase), normalized: normalizedPhrases)
            }
        case .voiceShortcutDeleted(let id):
            touchedVoiceShortcuts.insert(id)
            voiceShortcuts[id] = VoiceShortcutRow(id: id, deleted: true)
        case .appsReported(let installed):
            devices[key.deviceId].keepLatest(Stamped(key: key, value: installed))
        case .signedOut:
            signedOut.insert(key.deviceId)
            rules.signOut(key.deviceId)
        case .learningForgotten(let scope):
            if rules.forget(scope, at: key) { learningChanges.append(LearningChange(scope: scope, key: key, forget: true)) }
        case .learningPaused(let scope, let paused):
            if rules.pause(scope, paused, at: key) { learningChanges.append(LearningChange(scope: scope, key: key, forget: false)) }
        }
    }

    /// Normalizes a phrase of the batch once (`PhraseNormalizer` is Foundation's Unicode work, and
    /// a rebuild folds an account's every phrase, often the same few again).
    private mutating func remember(_ phrase: String) {
        if normalizedPhrases[phrase] == nil { normalizedPhrases[phrase] = PhraseNormalizer.normalize(phrase) }
    }

    /// Whether a learning event of the batch lands among the donations of a stored group (below
    /// its latest): then only the log can tell which of them teach.
    private func learnsLate(_ row: DonationGroupRow) -> Bool {
        learningChanges.contains { $0.key < row.latest && $0.scope.mayCover(row.id) }
    }

    /// The groups whose sums `finish(resummed:)` needs counted again from the log.
    public var resums: [Resum] {
        guard !learningChanges.isEmpty else { return [] }
        return before.groups.values.compactMap { row in
            guard row.count > 0, learnsLate(row) else { return nil }
            return Resum(group: row.id, from: threshold(of: row.id))
        }.sorted { $0.group < $1.group }
    }

    /// The greatest deletion key known to select `id`: every donation below it is covered.
    private func threshold(of id: DonationGroupID) -> EventKey? {
        var threshold = before.groups[id]?.coveredBelow
        for scope in DeletionScope.selecting(id) {
            if let key = marks[scope], threshold.map({ key > $0 }) ?? true { threshold = key }
        }
        return threshold
    }

    /// Drops the batch's donations that a deletion of `scope` with `key` covers.
    private mutating func cover(_ scope: DeletionScope, below key: EventKey) {
        guard var shortcuts = donations[scope.bundleId] else { return }
        let identifiers: [String] = if case .identifier(let shortcut) = scope { [shortcut.identifier] } else { Array(shortcuts.keys) }
        for identifier in identifiers {
            guard var groups = shortcuts[identifier] else { continue }
            for (group, var kept) in groups {
                let id = DonationGroupID(shortcut: ShortcutID(bundleId: scope.bundleId, identifier: identifier), group: group)
                guard scope.selects(id) else { continue }
                let covered = kept.insertionIndex(of: BatchDonation(key: key, version: 0))
                guard covered > 0 else { continue }
                kept.removeFirst(covered)
                groups[group] = kept
            }
            shortcuts[identifier] = groups
        }
        donations[scope.bundleId] = shortcuts
    }

    private mutating func updateVoiceShortcut(_ id: UUID, _ change: (inout VoiceShortcutRow) -> Void) {
        touchedVoiceShortcuts.insert(id)
        var row = voiceShortcuts[id] ?? VoiceShortcutRow(id: id)
        guard !row.deleted else { return }  // a deletion is final
        change(&row)
        voiceShortcuts[id] = row
    }

    // MARK: Finishing

    /// Every donation group the batch may change: those read, and those its donations start.
    private var groupIDs: Set<DonationGroupID> {
        var ids = Set(before.groups.keys)
        for (bundleId, shortcuts) in donations {
            for (identifier, groups) in shortcuts {
                for (group, kept) in groups where !kept.isEmpty {
                    ids.insert(DonationGroupID(shortcut: ShortcutID(bundleId: bundleId, identifier: identifier), group: group))
                }
            }
        }
        return ids
    }

    /// What only the log can tell: how many of earlier batches' donations this batch's deletions
    /// cover where they land among them. Answer each with `finish(covered:)`.
    public var recounts: [Recount] {
        before.groups.values.compactMap { row in
            guard row.count > 0, let to = threshold(of: row.id), to != row.coveredBelow, row.latest >= to else { return nil }
            return Recount(group: row.id, from: row.coveredBelow, to: to)
        }.sorted { $0.group < $1.group }
    }

    /// The rows to write back and the changes of the account's view, given how many donations
    /// each of `recounts` covers and which of them are eligible for prediction
    /// (`coveredEligible`: those the rules before the batch let teach are taken back from the
    /// group's sums).
    ///
    /// `resummed`: for each of `resums`, the donations the log holds for it. `forgottenShortcuts`:
    /// the stored forgets of the recounted and resummed groups' shortcuts (kept apart, read with them).
    public func finish(covered: [DonationGroupID: Int] = [:], coveredEligible: [DonationGroupID: [LoggedDonation]] = [:],
                       resummed: [DonationGroupID: [LoggedDonation]] = [:],
                       forgottenShortcuts: [ShortcutID: EventKey] = [:]) throws -> AccountBatchResult {
        var result = AccountBatchResult(version: before.version, maxHLC: maxHLC, lastVersion: lastVersion)
        if late { result.lateHorizon = before.horizon }
        var rules = self.rules, rulesBefore = before.learning
        for (shortcut, key) in forgottenShortcuts {
            rules.add(forgotten: shortcut, at: key)
            rulesBefore.add(forgotten: shortcut, at: key)
        }

        // Donation groups.
        var after: [DonationGroupID: DonationGroupRow] = [:]
        var shortcuts: Set<ShortcutID> = []
        for id in groupIDs {
            shortcuts.insert(id.shortcut)
            let row = before.groups[id]
            let threshold = threshold(of: id)
            var count = 0
            var latest: BatchDonation?
            var habits = ShortcutHabits()
            // The compacted part of the row (`AccountHorizon`): every event of the batch is later
            // than all of it, so a deletion that raises the group's coverage covers all of it and
            // a forget of its scope forgets all of it; the log is never asked about it.
            var compactedCount = 0
            var compactedHabits = ShortcutHabits()
            if let row, row.count > 0 {
                let surviving: Int
                if threshold == row.coveredBelow {
                    surviving = row.count
                    habits = row.habits
                    compactedCount = row.compactedCount
                    compactedHabits = row.compactedHabits
                } else if let threshold, row.latest < threshold {
                    surviving = 0
                } else {
                    let logged = row.count - row.compactedCount
                    guard let gone = covered[id], gone >= 0, gone <= logged else {
                        throw FoldError.recountMissing(id, answer: covered[id], count: logged)
                    }
                    surviving = logged - gone
                    habits = row.habits
                    habits.add(row.compactedHabits, subtracting: true)
                    // What the covered donations added, by the rules the row's sums were made with.
                    for donation in coveredEligible[id] ?? [] {
                        if let lesson = rulesBefore.lesson(of: donation.habit, key: donation.key, shortcut: id.shortcut) { habits.remove(lesson) }
                    }
                }
                if surviving > 0 {
                    count = surviving
                    latest = BatchDonation(key: row.latest, version: row.latestVersion)
                    for change in learningChanges where change.forget && change.scope.mayCover(id) {
                        compactedHabits.forget(change.scope)
                    }
                    if learnsLate(row) {
                        guard let logged = resummed[id] else { throw FoldError.resumMissing(id) }
                        habits = compactedHabits
                        for donation in logged {
                            if let lesson = rules.lesson(of: donation.habit, key: donation.key, shortcut: id.shortcut) { habits.add(lesson) }
                        }
                    } else {
                        // Newer than all its donations: a forget takes its scope's part, a pause changes nothing yet.
                        for change in learningChanges where change.forget && change.scope.mayCover(id) {
                            habits.forget(change.scope)
                        }
                    }
                } else {
                    habits = ShortcutHabits()
                    compactedCount = 0
                    compactedHabits = ShortcutHabits()
                }
            }
            let kept = donations[id.shortcut.bundleId]?[id.shortcut.identifier]?[id.group] ?? []
            let uncovered = threshold.map { kept[kept.insertionIndex(of: BatchDonation(key: $0, version: 0))...] } ?? kept[...]
            count += uncovered.count
            for donation in uncovered {
                if let habit = donation.habit, let lesson = rules.lesson(of: habit, key: donation.key, shortcut: id.shortcut) { habits.add(lesson) }
            }
            for device in signedOut {
                habits.drop(device)
                compactedHabits.drop(device)
            }
            if let last = uncovered.last, latest.map({ last.key > $0.key }) ?? true { latest = last }
            let new = latest.map {
                DonationGroupRow(id: id, count: count, latest: $0.key, latestVersion: $0.version, coveredBelow: threshold, habits: habits,
                                 compactedCount: compactedCount, compactedHabits: compactedHabits)
            }
            if let new { after[id] = new }
            if new != row, new != nil || row != nil { result.groups[id] = .some(new) }
        }

        // Shortcuts: one projected row each, from all of its groups.
        var exists: [ShortcutID: Bool] = [:]
        result.shortcutCount = before.shortcutCount
        let beforeByShortcut = Dictionary(grouping: before.groups.values, by: \.id.shortcut)
        let afterByShortcut = Dictionary(grouping: after.values, by: \.id.shortcut)
        for shortcut in shortcuts.union(knownShortcuts) {
            let old = ShortcutProjection(groups: beforeByShortcut[shortcut] ?? [])
            let new = ShortcutProjection(groups: afterByShortcut[shortcut] ?? [])
            exists[shortcut] = new != nil
            if old != new { result.shortcuts[shortcut] = .some(new) }
            let sums = Self.sums(of: afterByShortcut[shortcut])
            if old != new || sums != Self.sums(of: beforeByShortcut[shortcut]) { result.shortcutSums[shortcut] = sums }
            if old == nil && new != nil {
                result.addedShortcuts.insert(shortcut)
                result.shortcutCount += 1
            } else if old != nil && new == nil {
                result.shortcutCount -= 1
            }
            let held = afterByShortcut[shortcut] ?? []
            let gained = Set(held.lazy.filter { self.before.groups[$0.id] == nil }.map(\.id.group))
            if !gained.isEmpty { result.groupsGained[shortcut] = GroupsGained(held: held.count, new: gained) }
        }

        // Marks a deletion of the batch raised.
        for (scope, key) in marks where before.marks[scope] != key {
            result.marks[scope] = key
        }

        // Learning rules the batch changed (only a learning event or a sign-out changes them).
        if !learningChanges.isEmpty || !signedOut.isEmpty {
            let learning = self.rules.ofAccountAndDevices
            if learning != before.learning.ofAccountAndDevices { result.learning = learning }
            let forgottenBefore = before.learning.forgottenShortcuts
            for (shortcut, key) in self.rules.forgottenShortcuts where forgottenBefore[shortcut] != key {
                result.forgottenShortcuts[shortcut] = key
            }
            for change in learningChanges where !change.forget && rules.changeCount(of: change.scope) > Limits.maxLearningChangesPerScope {
                result.learningChangesBeyondLimit = change.scope
            }
        }

        // Voice shortcuts: bound shortcuts that came or went, then owners of the phrases touched.
        var rows = voiceShortcuts
        var phrases: Set<String> = []
        for id in touchedVoiceShortcuts {
            if let old = before.voiceShortcuts[id]?.normalizedPhrase { phrases.insert(old) }
            if let new = rows[id]?.normalizedPhrase { phrases.insert(new) }
        }
        for (id, row) in rows {
            if let target = row.targetShortcut, let available = exists[target] { rows[id]?.targetAvailable = available }
            if row.deleted || row.target == nil { rows[id]?.targetAvailable = false }
        }
        var owners: [String: (id: UUID, key: EventKey)] = [:]
        for row in rows.values where row.exists {
            guard let normalized = row.normalizedPhrase, phrases.contains(normalized), let key = row.phrase?.key else { continue }
            if let owner = owners[normalized], owner.key < key { continue }
            owners[normalized] = (row.id, key)
        }
        for (id, row) in rows {
            guard let normalized = row.normalizedPhrase, phrases.contains(normalized) || !row.exists else { continue }
            let owner = row.exists ? owners[normalized]?.id : nil
            rows[id]?.conflictsWith = owner == id ? nil : owner
        }
        for (id, row) in rows where row != before.voiceShortcuts[id] {
            let viewChanged = row.view != before.voiceShortcuts[id]?.view
            result.voiceShortcuts.append(VoiceShortcutChange(row: row, viewChanged: viewChanged))
        }
        result.voiceShortcuts.sort { $0.row.id.isOrdered(before: $1.row.id) }

        // Devices' latest reported apps.
        for (device, reported) in devices where reported != before.devices[device] {
            result.devices[device] = DeviceAppsChange(reported: reported, appsChanged: reported.value != before.devices[device]?.value)
        }

        let viewChanged = !result.shortcuts.isEmpty || result.voiceShortcuts.contains(where: \.viewChanged)
        // The rows it changes are marked with the account version after the batch: its last event's.
        result.version = max(before.version, lastVersion)
        result.viewChanged = viewChanged
        result.notify = viewChanged || result.devices.values.contains(where: \.appsChanged)
        return result
    }
}

extension AccountBatchFold {
    /// The suggestion sums of one shortcut's donation groups `rows`, together.
    static func sums(of rows: [DonationGroupRow]?) -> ShortcutHabits {
        guard let rows, let first = rows.first else { return ShortcutHabits() }
        var sums = first.habits
        for row in rows.dropFirst() { sums.add(row.habits) }
        return sums
    }
}

extension VoiceShortcutRow {
    /// Keeps the later phrase; `known` holds phrases normalized already.
    mutating func setPhrase(_ candidate: Stamped<String>, normalized known: [String: String]) {
        let before = phrase?.key
        phrase.keepLatest(candidate)
        if phrase?.key != before || normalizedPhrase == nil {
            normalizedPhrase = phrase.map { known[$0.value] ?? PhraseNormalizer.normalize($0.value) }
        }
    }
}

extension Array where Element: Comparable {
    /// Inserts in ascending order (in the log's order that is mostly at the end); an equal
    /// element already there is not inserted twice.
    mutating func insertKeepingOrder(_ element: Element) {
        if let last, last < element {
            append(element)
            return
        }
        let index = insertionIndex(of: element)
        guard index == endIndex || self[index] != element else { return }
        insert(element, at: index)
    }
}

/// A donation of the log eligible for prediction, as a resum reads it: its key and what it teaches.
public struct LoggedDonation: Sendable, Hashable {
    public var key: EventKey
    public var habit: HabitDonation

    public init(key: EventKey, habit: HabitDonation) {
        self.key = key
        self.habit = habit
    }
}

extension LearningScope {
    /// Whether donations of `group` may fall in this scope (a device's may be in any group).
    func mayCover(_ group: DonationGroupID) -> Bool {
        if case .shortcut(let shortcut) = self { shortcut == group.shortcut } else { true }
    }
}
