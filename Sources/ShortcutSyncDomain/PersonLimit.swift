/// A bound on what one person may make the service hold (DESIGN §5, "Bounded per person"),
/// broken by a request that is refused with nothing of it stored.
public enum PersonLimit: Error, Sendable, Hashable, CustomStringConvertible {
    /// The account already has this many signed-in devices.
    case devicesPerAccount(max: Int)
    /// The push would bring the account past this many shortcuts; `index` is the first donation
    /// of the batch that would.
    case shortcutsPerAccount(max: Int, index: Int)

    /// The bound's name, as the problem's `limit` member gives it.
    public var name: String {
        switch self {
        case .devicesPerAccount: "devicesPerAccount"
        case .shortcutsPerAccount: "shortcutsPerAccount"
        }
    }

    /// The field of the request at fault, if one is.
    public var pointer: String? {
        switch self {
        case .devicesPerAccount: nil
        case .shortcutsPerAccount(_, let index): "/events/\(index)"
        }
    }

    public var description: String {
        switch self {
        case .devicesPerAccount(let max):
            "the account has \(max) signed-in devices, the most it may have; sign one out first"
        case .shortcutsPerAccount(let max, _):
            "the account has \(max) shortcuts, the most it may have; delete donations first"
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
}
