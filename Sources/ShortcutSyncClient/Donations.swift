import Foundation
import ShortcutSyncDomain

/// An intent the person performed, as `INInteraction(intent:response:)` donates it.
public struct IntentDonation: Sendable, Hashable {
    /// The intent's class name, e.g. "OrderSoupIntent".
    public var intentType: String
    /// `INInteraction.identifier`: what a later deletion by identifier names.
    public var identifier: String
    /// What Siri shows (the intent's suggested title).
    public var title: String
    public var subtitle: String?
    /// `INInteraction.groupIdentifier`.
    public var groupIdentifier: String?
    /// `INIntent.suggestedInvocationPhrase`.
    public var suggestedInvocationPhrase: String?
    /// The intent's parameters, as JSON values.
    public var parameters: [String: JSONValue]

    public init(intentType: String, identifier: String, title: String, subtitle: String? = nil, groupIdentifier: String? = nil,
                suggestedInvocationPhrase: String? = nil, parameters: [String: JSONValue] = [:]) {
        self.intentType = intentType
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.groupIdentifier = groupIdentifier
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.parameters = parameters
    }

    func donation(bundleId: String) -> Donation {
        Donation(bundleId: bundleId, identifier: identifier, kind: .intent, intentType: intentType, title: title, subtitle: subtitle,
                 groupIdentifier: groupIdentifier, suggestedInvocationPhrase: suggestedInvocationPhrase, parameters: parameters)
    }
}

/// A user activity made current with `isEligibleForPrediction`, as `NSUserActivity` donates it.
public struct UserActivityDonation: Sendable, Hashable {
    /// `NSUserActivity.activityType`, e.g. "com.example.soup.order".
    public var activityType: String
    /// `persistentIdentifier`: what a later deletion by identifier names.
    public var persistentIdentifier: String
    public var title: String
    public var keywords: [String]
    public var isEligibleForSearch: Bool
    public var isEligibleForPrediction: Bool
    public var suggestedInvocationPhrase: String?
    /// `userInfo`, as JSON values.
    public var userInfo: [String: JSONValue]

    public init(activityType: String, persistentIdentifier: String, title: String, keywords: [String] = [],
                isEligibleForSearch: Bool = false, isEligibleForPrediction: Bool = true,
                suggestedInvocationPhrase: String? = nil, userInfo: [String: JSONValue] = [:]) {
        self.activityType = activityType
        self.persistentIdentifier = persistentIdentifier
        self.title = title
        self.keywords = keywords
        self.isEligibleForSearch = isEligibleForSearch
        self.isEligibleForPrediction = isEligibleForPrediction
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.userInfo = userInfo
    }

    func donation(bundleId: String) -> Donation {
        Donation(bundleId: bundleId, identifier: persistentIdentifier, kind: .userActivity, activityType: activityType, title: title,
                 suggestedInvocationPhrase: suggestedInvocationPhrase, keywords: keywords, eligibleForSearch: isEligibleForSearch,
                 eligibleForPrediction: isEligibleForPrediction, parameters: userInfo)
    }
}
