import Foundation

/// Which donations teach the suggestions, by the learning events of an account (DESIGN §3):
/// a donation eligible for prediction teaches unless
/// - its device was signed out,
/// - a forget of a scope it falls in (the account, its device, its shortcut) has a greater key, or
/// - at its key, the latest pause or resume of its account or of its device before it paused.
/// A donation that teaches teaches its place too unless a forget of its place has a greater key:
/// then it teaches its time alone (`lesson(of:key:shortcut:)`).
///
/// Every part is a function of the *set* of learning events: a forget keeps its scope's
/// greatest key, a pause history keeps every change by key. So the state, and which donations
/// teach, never depend on the order events arrive in.
public struct LearningRules: Sendable, Hashable {
    /// The greatest key of the forgets of each scope.
    public private(set) var forgotten: [LearningScope: EventKey] = [:]
    /// Each scope's pauses (`true`) and resumes (`false`), ascending by key. Account and devices only.
    public private(set) var pauses: [LearningScope: [Stamped<Bool>]] = [:]
    /// Devices signed out: nothing they donated teaches, whatever its key.
    public private(set) var signedOut: Set<UUID> = []
    /// Whether the account ever forgot a shortcut's learning: kept with the account's rules (which
    /// hold no shortcut's forget), so that a fold looks for shortcuts' forgets only then.
    public private(set) var forgetsShortcuts = false

    public init() {}

    public var isEmpty: Bool { forgotten.isEmpty && pauses.isEmpty && signedOut.isEmpty && !forgetsShortcuts }

    /// Whether a donation eligible for prediction, with `key`, of `shortcut` made on `device`, teaches.
    public func teaches(_ key: EventKey, device: UUID, shortcut: ShortcutID) -> Bool {
        if isEmpty { return true }
        if signedOut.contains(device) { return false }
        for scope in LearningScope.covering(device: device, shortcut: shortcut) {
            if let forget = forgotten[scope], key < forget { return false }
        }
        return !isPaused(.account, at: key) && !isPaused(.device(device), at: key)
    }

    /// What a donation eligible for prediction, with `key`, of `shortcut` teaches: nil if nothing
    /// (`teaches`), its time without its place if a forget of its place is newer, else all of it.
    public func lesson(of habit: HabitDonation, key: EventKey, shortcut: ShortcutID) -> HabitDonation? {
        if isEmpty { return habit }
        guard teaches(key, device: habit.deviceId, shortcut: shortcut) else { return nil }
        guard let place = habit.place, let forget = forgotten[.place(place)], key < forget else { return habit }
        var timeAlone = habit
        timeAlone.place = nil
        return timeAlone
    }

    /// Whether learning of `scope` is paused at `key`: its latest change before the key paused it.
    public func isPaused(_ scope: LearningScope, at key: EventKey) -> Bool {
        guard let changes = pauses[scope] else { return false }
        let index = changes.insertionIndex(of: key)
        return index > 0 && changes[index - 1].value
    }

    /// Whether learning of `scope` is paused now: by its latest change.
    public func isPaused(_ scope: LearningScope) -> Bool {
        pauses[scope]?.last?.value ?? false
    }

    /// How many pauses and resumes `scope` has had.
    public func changeCount(of scope: LearningScope) -> Int {
        pauses[scope]?.count ?? 0
    }

    // MARK: Folding learning events in

    /// Whether `scope` is the scope of a device signed out: what it holds can no longer change
    /// whether anything teaches (nothing the device donated does), so it is not kept.
    private func isOfSignedOutDevice(_ scope: LearningScope) -> Bool {
        if case .device(let device) = scope { signedOut.contains(device) } else { false }
    }

    /// A forget of `scope` at `key`. Returns whether the rules changed: not for a signed-out
    /// device's scope, which is not kept.
    @discardableResult
    public mutating func forget(_ scope: LearningScope, at key: EventKey) -> Bool {
        guard !isOfSignedOutDevice(scope) else { return false }
        if case .shortcut = scope { forgetsShortcuts = true }
        if let known = forgotten[scope], known >= key { return false }
        forgotten[scope] = key
        return true
    }

    /// A pause (`paused`) or resume of `scope` at `key`. Returns whether the rules changed: not
    /// for a signed-out device's scope, which is not kept.
    @discardableResult
    public mutating func pause(_ scope: LearningScope, _ paused: Bool, at key: EventKey) -> Bool {
        guard !isOfSignedOutDevice(scope) else { return false }
        let change = Stamped(key: key, value: paused)
        var changes = pauses[scope] ?? []
        let index = changes.insertionIndex(of: key)
        guard index == changes.endIndex || changes[index].key != key else { return false }
        changes.insert(change, at: index)
        pauses[scope] = changes
        return true
    }

    /// `device` was signed out. Returns whether the rules changed. Its forget and its pauses go:
    /// nothing it donated teaches any more whatever they say, so the rules hold a scope for a
    /// signed-in device at most, and their size is bounded by the account's device limit
    /// (DESIGN §5) — the same whichever came first, the sign-out or the events of its scope.
    @discardableResult
    public mutating func signOut(_ device: UUID) -> Bool {
        guard signedOut.insert(device).inserted else { return false }
        forgotten[.device(device)] = nil
        pauses[.device(device)] = nil
        return true
    }

    /// Forgets that `devices` were signed out, once nothing of theirs is left to fold: at a
    /// compaction, a device signed out at or below the horizon with no event after it has all its
    /// donations counted (as teaching nothing) in the snapshot, and it can push no more. Without
    /// this the list grew with every device an account ever signed out (issue 65, item 10); with
    /// it, the rules hold the devices signed out since the horizon at most.
    public mutating func forgetSignOuts(of devices: Set<UUID>) {
        signedOut.subtract(devices)
    }

    /// The rules of the account and of its devices: without shortcuts' forgets, which are kept
    /// beside the deletion marks, one row each (an account may forget many shortcuts).
    public var ofAccountAndDevices: LearningRules {
        var rules = self
        rules.forgotten = forgotten.filter { if case .shortcut = $0.key { false } else { true } }
        return rules
    }

    /// The forgets of shortcuts alone.
    public var forgottenShortcuts: [ShortcutID: EventKey] {
        var marks: [ShortcutID: EventKey] = [:]
        for (scope, key) in forgotten { if case .shortcut(let id) = scope { marks[id] = key } }
        return marks
    }

    /// Adds a shortcut's forget read back from where it is kept.
    public mutating func add(forgotten shortcut: ShortcutID, at key: EventKey) {
        forget(.shortcut(shortcut), at: key)
    }
}

extension Stamped: Comparable where Value: Comparable {
    /// By key alone: keys are unique in the log.
    public static func < (lhs: Stamped, rhs: Stamped) -> Bool { lhs.key < rhs.key }
}

extension Array where Element == Stamped<Bool> {
    /// The first index whose key is not less than `key` (ascending by key).
    func insertionIndex(of key: EventKey) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

// MARK: Stored form

extension LearningRules {
    /// The account's and devices' rules (`ofAccountAndDevices`) as bytes for one column,
    /// deterministic (so `verify` compares them byte for byte), nil when there are none.
    /// Format 1: the format byte; the signed-out devices (UInt32 count, 16 bytes each, in uuid
    /// order); the forgets (UInt32 count; each a scope and a 40-byte key); the pause histories
    /// (UInt32 count; each a scope, a UInt32 count and that many 40-byte keys each with a byte,
    /// 1 paused); then 1 if the account ever forgot a shortcut, else 0. A scope is a byte, 0 the
    /// account, 1 a device followed by its 16 bytes, 2 a place followed by its slot (rules
    /// without a place's forget have the bytes they had before places).
    public var bytes: [UInt8]? {
        let rules = ofAccountAndDevices
        guard !rules.isEmpty else { return nil }
        var bytes: [UInt8] = [1]
        func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        func append(_ id: UUID) { withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) } }
        func append(_ scope: LearningScope) {
            switch scope {
            case .device(let id):
                bytes.append(1)
                append(id)
            case .place(let slot):
                bytes.append(2)
                bytes.append(slot)
            case .account, .shortcut:  // no shortcut's forget is among these rules
                bytes.append(0)
            }
        }
        append(UInt32(rules.signedOut.count))
        for device in rules.signedOut.sorted(by: { $0.isOrdered(before: $1) }) { append(device) }
        append(UInt32(rules.forgotten.count))
        for (scope, key) in rules.forgotten.sorted(by: { $0.key.isStoredBefore($1.key) }) {
            append(scope)
            bytes.append(contentsOf: key.sortableBytes)
        }
        append(UInt32(rules.pauses.count))
        for (scope, changes) in rules.pauses.sorted(by: { $0.key.isStoredBefore($1.key) }) {
            append(scope)
            append(UInt32(changes.count))
            for change in changes {
                bytes.append(contentsOf: change.key.sortableBytes)
                bytes.append(change.value ? 1 : 0)
            }
        }
        bytes.append(rules.forgetsShortcuts ? 1 : 0)
        return bytes
    }

    /// The rules `bytes` gave; nil if these are not such bytes.
    public init?(bytes: some Collection<UInt8>) {
        var reader = ByteReader(bytes: Array(bytes))
        guard reader.byte() == 1 else { return nil }
        func scope() -> LearningScope? {
            switch reader.byte() {
            case 0: return .account
            case 1: return reader.uuid().map { .device($0) }
            case 2: return reader.byte().map { .place($0) }
            default: return nil
            }
        }
        func key() -> EventKey? {
            reader.take(EventKey.sortableByteCount).flatMap { EventKey(sortableBytes: $0) }
        }
        self.init()
        guard let devices = reader.uint32() else { return nil }
        for _ in 0..<devices {
            guard let device = reader.uuid() else { return nil }
            signedOut.insert(device)
        }
        guard let forgets = reader.uint32() else { return nil }
        for _ in 0..<forgets {
            guard let scope = scope(), let key = key() else { return nil }
            forgotten[scope] = key
        }
        guard let histories = reader.uint32() else { return nil }
        for _ in 0..<histories {
            guard let scope = scope(), scope.isPausable, let count = reader.uint32() else { return nil }
            var changes: [Stamped<Bool>] = []
            for _ in 0..<count {
                guard let key = key(), let value = reader.byte(), value <= 1 else { return nil }
                changes.append(Stamped(key: key, value: value == 1))
            }
            guard zip(changes, changes.dropFirst()).allSatisfy({ $0.key < $1.key }) else { return nil }
            pauses[scope] = changes
        }
        guard let flag = reader.byte(), flag <= 1, reader.atEnd else { return nil }
        forgetsShortcuts = flag == 1
        // Rules stored before signed-out devices' scopes were dropped may still hold some.
        for device in signedOut {
            forgotten[.device(device)] = nil
            pauses[.device(device)] = nil
        }
    }
}

extension LearningScope {
    /// The order scopes are stored in: the account, then devices by uuid, then places by slot,
    /// then shortcuts.
    public func isStoredBefore(_ other: LearningScope) -> Bool {
        switch (self, other) {
        case (.device(let a), .device(let b)): a.isOrdered(before: b)
        case (.place(let a), .place(let b)): a < b
        case (.shortcut(let a), .shortcut(let b)): a < b
        default: storedRank < other.storedRank
        }
    }

    private var storedRank: Int {
        switch self {
        case .account: 0
        case .device: 1
        case .place: 2
        case .shortcut: 3
        }
    }
}
