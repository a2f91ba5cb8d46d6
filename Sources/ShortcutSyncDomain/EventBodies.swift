import Foundation

/// How a shortcut was donated on the device.
public enum DonationKind: String, Sendable, Hashable, Codable, CaseIterable {
    case userActivity
    case intent
}

/// "The user just did this": an `INInteraction.donate` or an `NSUserActivity` eligible for prediction.
public struct Donation: Sendable, Hashable, Codable {
    public var bundleId: String
    public var identifier: String
    public var kind: DonationKind
    public var activityType: String?
    public var intentType: String?
    public var title: String
    public var subtitle: String?
    public var groupIdentifier: String?
    public var suggestedInvocationPhrase: String?
    public var keywords: [String]
    public var eligibleForSearch: Bool
    public var eligibleForPrediction: Bool
    public var parameters: [String: JSONValue]

    public init(
        bundleId: String, identifier: String, kind: DonationKind,
        activityType: String? = nil, intentType: String? = nil,
        title: String, subtitle: String? = nil, groupIdentifier: String? = nil,
        suggestedInvocationPhrase: String? = nil, keywords: [String] = [],
        eligibleForSearch: Bool = false, eligibleForPrediction: Bool = true,
        parameters: [String: JSONValue] = [:]
    ) {
        self.bundleId = bundleId
        self.identifier = identifier
        self.kind = kind
        self.activityType = activityType
        self.intentType = intentType
        self.title = title
        self.subtitle = subtitle
        self.groupIdentifier = groupIdentifier
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.keywords = keywords
        self.eligibleForSearch = eligibleForSearch
        self.eligibleForPrediction = eligibleForPrediction
        self.parameters = parameters
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, identifier, kind, activityType, intentType, title, subtitle, groupIdentifier
        case suggestedInvocationPhrase, keywords, eligibleForSearch, eligibleForPrediction, parameters
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        identifier = try c.decode(String.self, forKey: .identifier)
        kind = try c.decode(DonationKind.self, forKey: .kind)
        activityType = try c.decodeIfPresent(String.self, forKey: .activityType)
        intentType = try c.decodeIfPresent(String.self, forKey: .intentType)
        title = try c.decode(String.self, forKey: .title)
        subtitle = try c.decodeIfPresent(String.self, forKey: .subtitle)
        groupIdentifier = try c.decodeIfPresent(String.self, forKey: .groupIdentifier)
        suggestedInvocationPhrase = try c.decodeIfPresent(String.self, forKey: .suggestedInvocationPhrase)
        keywords = try c.decodeIfPresent([String].self, forKey: .keywords) ?? []
        eligibleForSearch = try c.decodeIfPresent(Bool.self, forKey: .eligibleForSearch) ?? false
        eligibleForPrediction = try c.decodeIfPresent(Bool.self, forKey: .eligibleForPrediction) ?? true
        parameters = try c.decodeIfPresent([String: JSONValue].self, forKey: .parameters) ?? [:]
    }
}

/// Which donations of one app a deletion selects.
public enum DeletionSelector: Sendable, Hashable {
    case identifiers([String])
    case groupIdentifier(String)
    case all
}

/// An app's request to forget donations: by identifiers, by group, or all of the app's.
public struct Deletion: Sendable, Hashable, Codable {
    public var bundleId: String
    public var selector: DeletionSelector

    public init(bundleId: String, selector: DeletionSelector) {
        self.bundleId = bundleId
        self.selector = selector
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, identifiers, groupIdentifier, all
    }

    static let allMustBeTrue = "must be true when given; to delete selected donations give identifiers or groupIdentifier"
    static let exactlyOneSelector = "a deletion needs exactly one of identifiers, groupIdentifier or all: true"

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        let identifiers = try c.decodeIfPresent([String].self, forKey: .identifiers)
        let group = try c.decodeIfPresent(String.self, forKey: .groupIdentifier)
        let all = try c.decodeIfPresent(Bool.self, forKey: .all)
        switch (identifiers, group, all) {
        case (let identifiers?, nil, nil):
            selector = .identifiers(identifiers)
        case (nil, let group?, nil):
            selector = .groupIdentifier(group)
        case (nil, nil, true):
            selector = .all
        case (nil, nil, false):
            throw DecodingError.dataCorrupted(.init(
                codingPath: c.codingPath + [CodingKeys.all], debugDescription: Self.allMustBeTrue))
        default:
            throw DecodingError.dataCorrupted(.init(
                codingPath: c.codingPath, debugDescription: Self.exactlyOneSelector))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bundleId, forKey: .bundleId)
        switch selector {
        case .identifiers(let identifiers): try c.encode(identifiers, forKey: .identifiers)
        case .groupIdentifier(let group): try c.encode(group, forKey: .groupIdentifier)
        case .all: try c.encode(true, forKey: .all)
        }
    }
}

/// The person bound a phrase to a shortcut (`INVoiceShortcut` added).
public struct VoiceShortcutAdded: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String
    public var bundleId: String
    public var identifier: String
    public var title: String

    public init(voiceShortcutId: UUID, phrase: String, bundleId: String, identifier: String, title: String) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
    }
}

/// The person changed a voice shortcut's phrase.
public struct VoiceShortcutUpdated: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String

    public init(voiceShortcutId: UUID, phrase: String) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
    }
}

/// The person removed a voice shortcut; final whatever the clocks say.
public struct VoiceShortcutDeleted: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID

    public init(voiceShortcutId: UUID) {
        self.voiceShortcutId = voiceShortcutId
    }
}

/// The apps now installed on the reporting device.
public struct AppsReported: Sendable, Hashable, Codable {
    public var installed: [String]

    public init(installed: [String]) {
        self.installed = installed
    }
}
