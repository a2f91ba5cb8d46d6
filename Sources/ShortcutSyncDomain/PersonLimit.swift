/// A bound on what one person may make the service hold (DESIGN §5, "Bounded per person"),
/// broken by a request that is refused with nothing of it stored.
public enum PersonLimit: Error, Sendable, Hashable, CustomStringConvertible {
    /// The account already has this many signed-in devices.
    case devicesPerAccount(max: Int)
    /// The push would bring the account past this many shortcuts; `index` is the first donation
    /// of the batch that would.
    case shortcutsPerAccount(max: Int, index: Int)
    /// The push would leave one shortcut with more than this many donation groups; `index` is
    /// the first donation of the batch that would.
    case groupsPerShortcut(max: Int, index: Int)
    /// The push would give the learning of the account or of one device more than this many
    /// pauses and resumes; `index` is the first of the batch's of that scope.
    case learningChangesPerScope(max: Int, index: Int)

    /// The bound's name, as the problem's `limit` member gives it.
    public var name: String {
        switch self {
        case .devicesPerAccount: "devicesPerAccount"
        case .shortcutsPerAccount: "shortcutsPerAccount"
        case .groupsPerShortcut: "groupsPerShortcut"
        case .learningChangesPerScope: "learningChangesPerScope"
        }
    }

    /// The field of the request at fault, if one is.
    public var pointer: String? {
        switch self {
        case .devicesPerAccount: nil
        case .shortcutsPerAccount(_, let index), .groupsPerShortcut(_, let index), .learningChangesPerScope(_, let index): "/events/\(index)"
        }
    }

    public var description: String {
        switch self {
        case .devicesPerAccount(let max):
            "the account has \(max) signed-in devices, the most it may have; sign one out first"
        case .shortcutsPerAccount(let max, _):
            "the account has \(max) shortcuts, the most it may have; delete donations first"
        case .groupsPerShortcut(let max, _):
            "the shortcut has donations in \(max) groups, the most one may have; delete a group's donations first"
        case .learningChangesPerScope(let max, _):
            "the suggestions' learning was paused and resumed \(max) times, the most it may be; forget what it learned instead"
        }
    }
}

extension PersonLimit {
    /// The first donation of `events` that would bring an account holding `existing` shortcuts
    /// past `maximum`, counting each shortcut of `new` (those the account does not hold yet) once.
    /// The index is the event's in `events` (a slice of a push keeps the push's indices).
    public static func firstShortcutBeyond<Events: Collection<Event>>(
        _ maximum: Int, in events: Events, existing: Int, new: Set<ShortcutID>
    ) -> PersonLimit? where Events.Index == Int {
        guard existing + new.count > maximum else { return nil }
        var added: Set<ShortcutID> = []
        for (index, event) in zip(events.indices, events) {
            guard case .donation(let donation) = event.body else { continue }
            let key = ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier)
            guard new.contains(key), added.insert(key).inserted else { continue }
            if existing + added.count > maximum { return .shortcutsPerAccount(max: maximum, index: index) }
        }
        return nil
    }

    /// The first donation of `events` that would leave a shortcut with more than `maximum`
    /// donation groups, given what the batch's fold gained (`AccountBatchResult.groupsGained`:
    /// per shortcut that gained a group, how many it holds after and which are new).
    public static func firstGroupBeyond<Events: Collection<Event>>(
        _ maximum: Int, in events: Events, gained: [ShortcutID: GroupsGained]
    ) -> PersonLimit? where Events.Index == Int {
        let over = gained.filter { $0.value.held > maximum }
        guard !over.isEmpty else { return nil }
        var added: [ShortcutID: Set<String>] = [:]
        var firstIndex: Int?
        for (index, event) in zip(events.indices, events) {
            guard case .donation(let donation) = event.body else { continue }
            let key = ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier)
            guard let gain = over[key], gain.new.contains(donation.groupIdentifier ?? "") else { continue }
            firstIndex = firstIndex ?? index
            guard added[key, default: []].insert(donation.groupIdentifier ?? "").inserted else { continue }
            if gain.held - gain.new.count + added[key]!.count > maximum { return .groupsPerShortcut(max: maximum, index: index) }
        }
        // A group the batch gained was counted after a deletion of the batch left fewer: the first of them.
        return .groupsPerShortcut(max: maximum, index: firstIndex ?? events.startIndex)
    }
}

extension PersonLimit {
    /// What `events` would gain over the donation groups `held` (per shortcut, before them),
    /// counting every group they donate to: for a batch not folded yet.
    public static func groupsGained(by events: some Sequence<Event>, holding held: [ShortcutID: Set<String>]) -> [ShortcutID: GroupsGained] {
        var gained: [ShortcutID: GroupsGained] = [:]
        for event in events {
            guard case .donation(let donation) = event.body else { continue }
            let key = ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier), group = donation.groupIdentifier ?? ""
            let before = held[key] ?? []
            guard !before.contains(group) else { continue }
            var gain = gained[key] ?? GroupsGained(held: before.count, new: [])
            if gain.new.insert(group).inserted { gain.held += 1 }
            gained[key] = gain
        }
        return gained
    }
}
