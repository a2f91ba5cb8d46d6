import Foundation

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
    /// The device's offset from UTC when the person did it (−720…840 minutes); nil counts as 0.
    /// It places the donation in the person's local week for suggestions (DESIGN §3).
    public var utcOffsetMinutes: Int?

    public init(
        bundleId: String, identifier: String, kind: DonationKind,
        activityType: String? = nil, intentType: String? = nil,
        title: String, subtitle: String? = nil, groupIdentifier: String? = nil,
        suggestedInvocationPhrase: String? = nil, keywords: [String] = [],
        eligibleForSearch: Bool = false, eligibleForPrediction: Bool = true,
        parameters: [String: JSONValue] = [:], utcOffsetMinutes: Int? = nil
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
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, identifier, kind, activityType, intentType, title, subtitle, groupIdentifier
        case suggestedInvocationPhrase, keywords, eligibleForSearch, eligibleForPrediction, parameters, utcOffsetMinutes
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
        utcOffsetMinutes = try c.decodeIfPresent(Int.self, forKey: .utcOffsetMinutes)
    }
}
