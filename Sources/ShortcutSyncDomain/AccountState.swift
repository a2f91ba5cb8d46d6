import Foundation

extension Optional {
    mutating func keepLatest<Value>(_ candidate: Stamped<Value>) where Wrapped == Stamped<Value> {
        if var current = self {
            current.keepLatest(candidate)
            self = current
        } else {
            self = candidate
        }
    }
}

/// The merge rules of DESIGN §3 as a state that events are folded into, one at a time.
///
/// The state depends only on the *set* of events applied: any order, any repetition, gives
/// an equal state. It keeps just what later events can still change: for deletions the
/// greatest key per selector (a deletion covers everything older, so the newest dominates),
/// for each shortcut the keys of its uncovered donations per group (within a group coverage
/// always takes the oldest first) and the latest donation's attributes, for voice shortcuts
/// their latest target and phrase or a tombstone.
public struct AccountState: Sendable, Hashable {
    struct GroupKey: Sendable, Hashable {
        var bundleId: String
        var groupIdentifier: String
    }

    /// Uncovered donations of one shortcut that share a `groupIdentifier`.
    struct GroupDonations: Sendable, Hashable {
        /// Ascending keys of the uncovered donations.
        var keys: [EventKey]
        /// The donation whose key is `keys.last`.
        var latest: Donation
    }

    struct ShortcutState: Sendable, Hashable {
        /// Keyed by `groupIdentifier`, "" for donations without one (a real group is never empty).
        var groups: [String: GroupDonations]
    }

    struct VoiceShortcutState: Sendable, Hashable {
        var target: Stamped<VoiceShortcutAdded>?
        var phrase: Stamped<String>?
        var normalizedPhrase: String?
        var deleted: Bool
    }

    var deletedAll: [String: EventKey] = [:]
    var deletedIdentifiers: [ShortcutID: EventKey] = [:]
    var deletedGroups: [GroupKey: EventKey] = [:]
    var shortcuts: [ShortcutID: ShortcutState] = [:]
    var voiceShortcuts: [UUID: VoiceShortcutState] = [:]
    var appsReported: [UUID: Stamped<Set<String>>] = [:]
    /// Which donations teach the suggestions.
    public private(set) var learning = LearningRules()
    /// What each donation eligible for prediction would teach, by key, covered or not: the sums
    /// are worked out from these when asked (`habits`), never kept.
    var taught: [EventKey: HabitDonation] = [:]
    /// The greatest hlc of any event applied, handed to devices to advance their clocks.
    public private(set) var maxHLC: HLCTimestamp = .zero

    public init() {}

    /// The state of a set of events.
    public init(folding events: some Sequence<AcceptedEvent>) {
        self.init()
        for event in events { apply(event) }
    }

    /// Folds one more accepted event in. Applying an event already applied changes nothing.
    public mutating func apply(_ accepted: AcceptedEvent) {
        let key = accepted.key
        maxHLC = max(maxHLC, accepted.event.hlc)
        switch accepted.event.body {
        case .donation(let donation):
            if donation.eligibleForPrediction {
                taught[key] = HabitDonation(deviceId: accepted.deviceId, wallMillis: accepted.event.hlc.wallMillis,
                                            utcOffsetMinutes: donation.utcOffsetMinutes ?? 0, placeToken: donation.place)
            }
            apply(donation, key: key)
        case .deletion(let deletion):
            apply(deletion, key: key)
        case .voiceShortcutAdded(let added):
            updateVoiceShortcut(added.voiceShortcutId) { state in
                state.target.keepLatest(Stamped(key: key, value: added))
                state.setPhrase(Stamped(key: key, value: added.phrase))
            }
        case .voiceShortcutUpdated(let updated):
            updateVoiceShortcut(updated.voiceShortcutId) { state in
                state.setPhrase(Stamped(key: key, value: updated.phrase))
            }
        case .voiceShortcutDeleted(let deleted):
            voiceShortcuts[deleted.voiceShortcutId] = VoiceShortcutState(target: nil, phrase: nil, normalizedPhrase: nil, deleted: true)
        case .appsReported(let report):
            appsReported[accepted.deviceId].keepLatest(Stamped(key: key, value: Set(report.installed)))
        case .signedOut:
            learning.signOut(accepted.deviceId)
        case .learningForgotten(let forgotten):
            learning.forget(forgotten.scope, at: key)
        case .learningPaused(let paused):
            learning.pause(paused.scope, paused.paused, at: key)
        }
    }

    // MARK: Shortcuts

    /// The key below which donations of this shortcut in this group are covered, if any.
    func coverage(of id: ShortcutID, group: String) -> EventKey? {
        var threshold = deletedAll[id.bundleId]
        if let key = deletedIdentifiers[id], threshold.map({ key > $0 }) ?? true { threshold = key }
        if !group.isEmpty, let key = deletedGroups[GroupKey(bundleId: id.bundleId, groupIdentifier: group)],
           threshold.map({ key > $0 }) ?? true {
            threshold = key
        }
        return threshold
    }

    private mutating func apply(_ donation: Donation, key: EventKey) {
        let id = ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier)
        let group = donation.groupIdentifier ?? ""
        if let threshold = coverage(of: id, group: group), key < threshold { return }
        var state = shortcuts[id] ?? ShortcutState(groups: [:])
        if var donations = state.groups[group] {
            let index = donations.keys.insertionIndex(of: key)
            guard index == donations.keys.endIndex || donations.keys[index] != key else { return }
            donations.keys.insert(key, at: index)
            if index == donations.keys.endIndex - 1 { donations.latest = donation }
            state.groups[group] = donations
        } else {
            state.groups[group] = GroupDonations(keys: [key], latest: donation)
        }
        shortcuts[id] = state
    }

    private mutating func apply(_ deletion: Deletion, key: EventKey) {
        let bundleId = deletion.bundleId
        switch deletion.selector {
        case .identifiers(let identifiers):
            for identifier in identifiers {
                let id = ShortcutID(bundleId: bundleId, identifier: identifier)
                deletedIdentifiers[id] = max(deletedIdentifiers[id] ?? key, key)
                cover(id, below: key) { _ in true }
            }
        case .groupIdentifier(let group):
            let groupKey = GroupKey(bundleId: bundleId, groupIdentifier: group)
            deletedGroups[groupKey] = max(deletedGroups[groupKey] ?? key, key)
            for id in shortcuts.keys where id.bundleId == bundleId {
                cover(id, below: key) { $0 == group }
            }
        case .all:
            deletedAll[bundleId] = max(deletedAll[bundleId] ?? key, key)
            for id in shortcuts.keys where id.bundleId == bundleId {
                cover(id, below: key) { _ in true }
            }
        }
    }

    /// Drops the donations older than `key` in the selected groups of one shortcut.
    private mutating func cover(_ id: ShortcutID, below key: EventKey, groups selects: (String) -> Bool) {
        guard var state = shortcuts[id] else { return }
        for (group, var donations) in state.groups where selects(group) {
            let kept = donations.keys.insertionIndex(of: key)
            guard kept > 0 else { continue }
            if kept == donations.keys.endIndex {
                state.groups[group] = nil
            } else {
                donations.keys.removeFirst(kept)
                state.groups[group] = donations
            }
        }
        shortcuts[id] = state.groups.isEmpty ? nil : state
    }

    /// Whether a shortcut exists: at least one of its donations is not covered.
    public func shortcutExists(_ id: ShortcutID) -> Bool {
        shortcuts[id] != nil
    }

    /// Every existing shortcut of the account.
    public var shortcutViews: [ShortcutID: ShortcutView] {
        var views: [ShortcutID: ShortcutView] = [:]
        views.reserveCapacity(shortcuts.count)
        for (id, state) in shortcuts {
            var latest: GroupDonations?
            var count = 0
            for donations in state.groups.values {
                count += donations.keys.count
                if latest.map({ donations.keys.last! > $0.keys.last! }) ?? true { latest = donations }
            }
            if let latest {
                views[id] = ShortcutView(latest: latest.latest, donationCount: count, lastDonatedAt: latest.keys.last!.hlc)
            }
        }
        return views
    }

    // MARK: Suggestions

    /// What a shortcut teaches the suggestions: the sums of its uncovered donations eligible for
    /// prediction that the learning rules let teach, per device. Empty when none.
    public func habits(of id: ShortcutID) -> ShortcutHabits {
        var habits = ShortcutHabits()
        for key in shortcuts[id]?.groups.values.flatMap(\.keys) ?? [] {
            if let habit = taught[key], let lesson = learning.lesson(of: habit, key: key, shortcut: id) { habits.add(lesson) }
        }
        return habits
    }

    /// Every shortcut that teaches something, with what it teaches.
    public var allHabits: [ShortcutID: ShortcutHabits] {
        var all: [ShortcutID: ShortcutHabits] = [:]
        for id in shortcuts.keys {
            let habits = habits(of: id)
            if !habits.isEmpty { all[id] = habits }
        }
        return all
    }

    // MARK: Voice shortcuts

    private mutating func updateVoiceShortcut(_ id: UUID, _ change: (inout VoiceShortcutState) -> Void) {
        var state = voiceShortcuts[id] ?? VoiceShortcutState(target: nil, phrase: nil, normalizedPhrase: nil, deleted: false)
        guard !state.deleted else { return }  // a deletion is final
        change(&state)
        voiceShortcuts[id] = state
    }

    // MARK: Views

    /// What one device sees: the account's whole view, made visible to the apps it reported.
    public func view(forDevice deviceId: UUID) -> DeviceView {
        accountView.visible(toDeviceWith: installedApps(ofDevice: deviceId))
    }

    /// The account's whole view: every existing shortcut and voice shortcut, `appInstalled` true.
    /// A device's view is this, made `visible(toDeviceWith:)` its installed apps.
    public var accountView: DeviceView {
        AccountView(self).whole
    }

    /// The apps `deviceId` reported last (latest by key), or nil if it never reported any.
    public func installedApps(ofDevice deviceId: UUID) -> Set<String>? {
        appsReported[deviceId]?.value
    }

    /// Every device that reported its apps, with the apps it reported last.
    public var reportedApps: [UUID: Set<String>] {
        appsReported.mapValues(\.value)
    }
}

extension AccountState.VoiceShortcutState {
    mutating func setPhrase(_ candidate: Stamped<String>) {
        let before = phrase?.key
        phrase.keepLatest(candidate)
        if phrase?.key != before || normalizedPhrase == nil {
            normalizedPhrase = phrase.map { PhraseNormalizer.normalize($0.value) }
        }
    }
}

extension Array where Element: Comparable {
    /// The first index whose element is not less than `value` (the array is sorted ascending).
    func insertionIndex(of value: Element) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
