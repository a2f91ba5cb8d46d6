import Foundation

/// What a forget or a pause of the suggestions' learning is about (DESIGN §3): the whole
/// account, one device (what it taught), or one shortcut (what it taught on every device). A
/// pause is of the account or of a device only.
public enum LearningScope: Sendable, Hashable, CustomStringConvertible {
    case account
    case device(UUID)
    case shortcut(ShortcutID)

    /// The scopes a donation of `shortcut` made on `device` falls in.
    static func covering(device: UUID, shortcut: ShortcutID) -> [LearningScope] {
        [.account, .device(device), .shortcut(shortcut)]
    }

    public var description: String {
        switch self {
        case .account: "the account"
        case .device(let id): "device \(id.uuidString.lowercased())"
        case .shortcut(let id): "\(id)"
        }
    }

    /// The `scope` field of an event's body.
    public var name: String {
        switch self {
        case .account: "account"
        case .device: "device"
        case .shortcut: "shortcut"
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

    static let accountOrDevice = "a pause is of the account or of one device; to stop one shortcut teaching, forget it"

    enum CodingKeys: String, CodingKey { case paused }

    public init(from decoder: any Decoder) throws {
        scope = try LearningScope(fieldsFrom: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if case .shortcut = scope {
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
    enum FieldKeys: String, CodingKey { case scope, deviceId, bundleId, identifier }

    /// Why a scope named `name` could not be made of the fields given: an unknown name is a fault
    /// of the `scope` field (`atScope`), a known one with the wrong fields of the body.
    static func fault(ofScope name: String) -> (atScope: Bool, detail: String) {
        switch name {
        case "account": (false, "an account scope takes no deviceId, bundleId or identifier")
        case "device": (false, "a device scope needs deviceId and nothing of a shortcut")
        case "shortcut": (false, "a shortcut scope needs bundleId and identifier and no deviceId")
        default: (true, "must be account, device or shortcut")
        }
    }

    /// Reads `scope` and the fields it needs (`deviceId`; `bundleId` and `identifier`) from an
    /// event body; a field the scope does not take is an error, as a deletion's extra selector is.
    init(fieldsFrom decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKeys.self)
        let name = try c.decode(String.self, forKey: .scope)
        let device = try c.decodeIfPresent(UUID.self, forKey: .deviceId)
        let bundleId = try c.decodeIfPresent(String.self, forKey: .bundleId)
        let identifier = try c.decodeIfPresent(String.self, forKey: .identifier)
        guard let scope = Self(name: name, deviceId: device, bundleId: bundleId, identifier: identifier) else {
            let fault = Self.fault(ofScope: name)
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + (fault.atScope ? [FieldKeys.scope] as [any CodingKey] : []),
                                                    debugDescription: fault.detail))
        }
        self = scope
    }

    /// The scope named `name` with exactly the fields it needs, or nil.
    public init?(name: String, deviceId: UUID?, bundleId: String?, identifier: String?) {
        switch (name, deviceId, bundleId, identifier) {
        case ("account", nil, nil, nil): self = .account
        case ("device", let device?, nil, nil): self = .device(device)
        case ("shortcut", nil, let bundleId?, let identifier?): self = .shortcut(ShortcutID(bundleId: bundleId, identifier: identifier))
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
        }
    }
}
