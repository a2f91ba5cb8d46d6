import Foundation

extension UUID {
    /// The first eight hex digits, enough to tell ids apart by eye.
    public var short: String { String(uuidString.lowercased().prefix(8)) }
}

/// The history of one shortcut: every event of the account that touched it or its voice
/// shortcuts, with its effects, found by folding the account's log one event at a time (the
/// same fold as every view) and comparing the shortcut's view before and after each event.
public struct ShortcutHistory: Sendable {
    public struct Entry: Sendable, Hashable {
        /// The event's index in the events given.
        public var index: Int
        public var effects: [ShortcutEffect]
    }

    public let shortcut: ShortcutID

    public init(shortcut: ShortcutID) {
        self.shortcut = shortcut
    }

    /// The entries for `events`, an account's log in log order.
    public func entries(of events: [AcceptedEvent]) -> [Entry] {
        let selection = Selection(shortcut: shortcut, events: events)
        var state = AccountState()
        var before: (shortcut: ShortcutView?, voices: [UUID: VoiceShortcutView]) = (nil, [:])
        var existedOnce = false
        var entries: [Entry] = []
        for (index, event) in events.enumerated() {
            state.apply(event)
            let view = state.accountView
            let after = (shortcut: view.shortcuts[shortcut], voices: view.voiceShortcuts.filter { $0.value.target == shortcut })
            var effects = Self.shortcutEffects(before.shortcut, after.shortcut, existedOnce: existedOnce)
            effects += Self.voiceEffects(before.voices, after.voices)
            if effects.isEmpty, selection.touches(event.event.body) {
                // Its own donation that changed nothing was older than a deletion of it.
                effects = if case .donation = event.event.body { [.coveredOnArrival] } else { [.noChange] }
            }
            if !effects.isEmpty { entries.append(Entry(index: index, effects: effects)) }
            existedOnce = existedOnce || after.shortcut != nil
            before = after
        }
        return entries
    }

    private static func shortcutEffects(_ old: ShortcutView?, _ new: ShortcutView?, existedOnce: Bool) -> [ShortcutEffect] {
        switch (old, new) {
        case (nil, nil):
            return []
        case (nil, .some):
            return [existedOnce ? .broughtBack : .created]
        case (.some, nil):
            return [.deleted]
        case (let old?, let new?):
            var effects: [ShortcutEffect] = []
            if new.donationCount > old.donationCount {
                effects.append(.donatedAgain)
            } else if new.donationCount < old.donationCount {
                effects.append(.donationsCovered(old.donationCount - new.donationCount))
            }
            let changed = changedAttributes(old, new)
            if !changed.isEmpty {
                if effects.first == .donatedAgain { effects.removeFirst() }
                effects.append(.attributesChanged(changed))
            }
            return effects
        }
    }

    private static func voiceEffects(_ old: [UUID: VoiceShortcutView], _ new: [UUID: VoiceShortcutView]) -> [ShortcutEffect] {
        var effects: [ShortcutEffect] = []
        for id in Set(old.keys).union(new.keys).sorted(by: { $0.uuidString < $1.uuidString }) {
            switch (old[id], new[id]) {
            case (nil, let added?):
                effects.append(.voiceShortcutAdded(id: id, phrase: added.phrase))
                if let owner = added.conflictsWith { effects.append(.phraseConflict(id: id, with: owner)) }
            case (.some, nil):
                effects.append(.voiceShortcutDeleted(id: id))
            case (let before?, let after?):
                if before.phrase != after.phrase {
                    effects.append(.phraseChanged(id: id, from: before.phrase, to: after.phrase))
                }
                if let owner = after.conflictsWith, owner != before.conflictsWith {
                    effects.append(.phraseConflict(id: id, with: owner))
                } else if after.conflictsWith == nil, before.conflictsWith != nil {
                    effects.append(.conflictResolved(id: id))
                }
            case (nil, nil):
                break
            }
        }
        return effects
    }

    /// The names of the fields the view shows that differ (never `bundleId` or `identifier`,
    /// which name the shortcut), in `Donation.fields`' order.
    private static func changedAttributes(_ old: ShortcutView, _ new: ShortcutView) -> [String] {
        Donation.fields.filter { $0.inView && $0.differs(old.latest, new.latest) }.map(\.name)
    }

    /// Which events name the shortcut, whatever they changed.
    private struct Selection {
        let shortcut: ShortcutID
        /// The groups its donations were made in: a deletion of one of them selects it.
        var groups: Set<String> = []
        /// The voice shortcuts ever bound to it.
        var voiceShortcuts: Set<UUID> = []

        init(shortcut: ShortcutID, events: [AcceptedEvent]) {
            self.shortcut = shortcut
            for event in events {
                switch event.event.body {
                case .donation(let donation) where donation.shortcutID == shortcut:
                    if let group = donation.groupIdentifier { groups.insert(group) }
                case .voiceShortcutAdded(let added) where added.target == shortcut:
                    voiceShortcuts.insert(added.voiceShortcutId)
                default:
                    break
                }
            }
        }

        func touches(_ body: EventBody) -> Bool {
            switch body {
            case .donation(let donation):
                donation.shortcutID == shortcut
            case .deletion(let deletion):
                deletion.bundleId == shortcut.bundleId && {
                    switch deletion.selector {
                    case .identifiers(let identifiers): identifiers.contains(shortcut.identifier)
                    case .groupIdentifier(let group): groups.contains(group)
                    case .all: true
                    }
                }()
            case .voiceShortcutAdded(let added):
                voiceShortcuts.contains(added.voiceShortcutId)
            case .voiceShortcutUpdated(let updated):
                voiceShortcuts.contains(updated.voiceShortcutId)
            case .voiceShortcutDeleted(let deleted):
                voiceShortcuts.contains(deleted.voiceShortcutId)
            case .learningForgotten(let forgotten):
                // What the suggestions learned of the shortcut was forgotten, alone or with the account's.
                switch forgotten.scope {
                case .account: true
                case .device, .place: false
                case .shortcut(let id): id == shortcut
                }
            case .appsReported, .signedOut, .learningPaused:
                false
            }
        }
    }
}

extension Donation {
    var shortcutID: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}

extension VoiceShortcutAdded {
    var target: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}

extension VoiceShortcutView {
    /// The shortcut it is bound to.
    public var target: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}
