import Foundation
import ShortcutSyncDomain

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
    /// Where the activity happened (as `IntentDonation.location`); nil: the device's location now, if any.
    public var location: PlaceCoordinate?

    public init(activityType: String, persistentIdentifier: String, title: String, keywords: [String] = [],
                isEligibleForSearch: Bool = false, isEligibleForPrediction: Bool = true,
                suggestedInvocationPhrase: String? = nil, userInfo: [String: JSONValue] = [:], location: PlaceCoordinate? = nil) {
        self.activityType = activityType
        self.persistentIdentifier = persistentIdentifier
        self.title = title
        self.keywords = keywords
        self.isEligibleForSearch = isEligibleForSearch
        self.isEligibleForPrediction = isEligibleForPrediction
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.userInfo = userInfo
        self.location = location
    }

    func donation(bundleId: String) -> Donation {
        Donation(bundleId: bundleId, identifier: persistentIdentifier, kind: .userActivity, activityType: activityType, title: title,
                 suggestedInvocationPhrase: suggestedInvocationPhrase, keywords: keywords, eligibleForSearch: isEligibleForSearch,
                 eligibleForPrediction: isEligibleForPrediction, parameters: userInfo)
    }
}
