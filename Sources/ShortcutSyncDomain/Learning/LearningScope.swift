import Foundation

/// What a forget or a pause of the suggestions' learning is about (DESIGN §3): the whole
/// account, one device (what it taught), one shortcut (what it taught on every device), or one
/// place (where every shortcut was used there: the donations still teach their time). A place is
/// its slot (`PlaceToken.slot`), named by the two hex digits habits show it by; forgetting it
/// forgets every place that shares the slot. A pause is of the account or of a device only.
public enum LearningScope: Sendable, Hashable, CustomStringConvertible {
    case account
    case device(UUID)
    case shortcut(ShortcutID)
    case place(UInt8)

    /// The scopes a donation of `shortcut` made on `device` falls in.
    static func covering(device: UUID, shortcut: ShortcutID) -> [LearningScope] {
        [.account, .device(device), .shortcut(shortcut)]
    }

    public var description: String {
        switch self {
        case .account: "the account"
        case .device(let id): "device \(id.uuidString.lowercased())"
        case .shortcut(let id): "\(id)"
        case .place(let slot): "place \(PlaceToken.prefix(ofSlot: slot))"
        }
    }

    /// The `scope` field of an event's body.
    public var name: String {
        switch self {
        case .account: "account"
        case .device: "device"
        case .shortcut: "shortcut"
        case .place: "place"
        }
    }
}

/// "Forget what the suggestions learned" of a scope: every donation of the scope with a smaller
/// key stops teaching, for good. Views do not change.
public struct LearningForgotten: Sendable, Hashable, Codable {
    public var scope: LearningScope

    public init(scope: LearningScope) {
        self.scope = scope
    }

    public init(from decoder: any Decoder) throws {
        scope = try LearningScope(fieldsFrom: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try scope.encodeFields(to: encoder)
    }
}

/// Learning of the account or of one device paused (`paused: true`) or resumed (`false`): a
/// donation teaches only while neither its device's nor its account's learning is paused at
/// its key. Views do not change.
public struct LearningPaused: Sendable, Hashable, Codable {
    public var scope: LearningScope
    public var paused: Bool

    public init(scope: LearningScope, paused: Bool) {
        self.scope = scope
        self.paused = paused
    }

    static let accountOrDevice = "a pause is of the account or of one device; to stop one shortcut or one place teaching, forget it"

    enum CodingKeys: String, CodingKey { case paused }

    public init(from decoder: any Decoder) throws {
        scope = try LearningScope(fieldsFrom: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if !scope.isPausable {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: Self.accountOrDevice))
        }
        paused = try c.decode(Bool.self, forKey: .paused)
    }

    public func encode(to encoder: any Encoder) throws {
        try scope.encodeFields(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(paused, forKey: .paused)
    }
}

extension LearningScope {
    enum FieldKeys: String, CodingKey { case scope, deviceId, bundleId, identifier, place }

    /// Whether learning of the scope can be paused: the account's or a device's.
    public var isPausable: Bool {
        switch self {
        case .account, .device: true
        case .shortcut, .place: false
        }
    }

    /// Why a scope named `name` could not be made of the fields given: an unknown name is a fault
    /// of the `scope` field (`atScope`), a known one with the wrong fields of the body.
    static func fault(ofScope name: String) -> (atScope: Bool, detail: String) {
        switch name {
        case "account": (false, "an account scope takes no deviceId, bundleId, identifier or place")
        case "device": (false, "a device scope needs deviceId and nothing of a shortcut or a place")
        case "shortcut": (false, "a shortcut scope needs bundleId and identifier and no deviceId or place")
        case "place": (false, "a place scope needs place: the first 2 hex digits of its tokens (lowercase), as habits show it; and nothing else")
        default: (true, "must be account, device, shortcut or place")
        }
    }

    /// Reads `scope` and the fields it needs (`deviceId`; `bundleId` and `identifier`; `place`) from an
    /// event body; a field the scope does not take is an error, as a deletion's extra selector is.
    init(fieldsFrom decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKeys.self)
        let name = try c.decode(String.self, forKey: .scope)
        let device = try c.decodeIfPresent(UUID.self, forKey: .deviceId)
        let bundleId = try c.decodeIfPresent(String.self, forKey: .bundleId)
        let identifier = try c.decodeIfPresent(String.self, forKey: .identifier)
        let place = try c.decodeIfPresent(String.self, forKey: .place)
        guard let scope = Self(name: name, deviceId: device, bundleId: bundleId, identifier: identifier, place: place) else {
            let fault = Self.fault(ofScope: name)
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + (fault.atScope ? [FieldKeys.scope] as [any CodingKey] : []),
                                                    debugDescription: fault.detail))
        }
        self = scope
    }

    /// The scope named `name` with exactly the fields it needs, or nil.
    public init?(name: String, deviceId: UUID?, bundleId: String?, identifier: String?, place: String? = nil) {
        switch (name, deviceId, bundleId, identifier, place) {
        case ("account", nil, nil, nil, nil): self = .account
        case ("device", let device?, nil, nil, nil): self = .device(device)
        case ("shortcut", nil, let bundleId?, let identifier?, nil): self = .shortcut(ShortcutID(bundleId: bundleId, identifier: identifier))
        case ("place", nil, nil, nil, let prefix?):
            guard let slot = PlaceToken.slot(ofPrefix: prefix) else { return nil }
            self = .place(slot)
        default: return nil
        }
    }

    func encodeFields(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKeys.self)
        try c.encode(name, forKey: .scope)
        switch self {
        case .account: break
        case .device(let id): try c.encode(id, forKey: .deviceId)
        case .shortcut(let id):
            try c.encode(id.bundleId, forKey: .bundleId)
            try c.encode(id.identifier, forKey: .identifier)
        case .place(let slot): try c.encode(PlaceToken.prefix(ofSlot: slot), forKey: .place)
        }
    }
}
