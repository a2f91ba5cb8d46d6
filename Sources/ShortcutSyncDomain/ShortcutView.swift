import Foundation

/// A shortcut as a device sees it: the attributes of its latest uncovered donation.
public struct ShortcutView: Sendable, Hashable, Codable {
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
    /// How many of its donations no deletion covers.
    public var donationCount: Int
    /// The hlc of the latest uncovered donation.
    public var lastDonatedAt: HLCTimestamp

    public init(latest donation: Donation, donationCount: Int, lastDonatedAt: HLCTimestamp) {
        bundleId = donation.bundleId
        identifier = donation.identifier
        kind = donation.kind
        activityType = donation.activityType
        intentType = donation.intentType
        title = donation.title
        subtitle = donation.subtitle
        groupIdentifier = donation.groupIdentifier
        suggestedInvocationPhrase = donation.suggestedInvocationPhrase
        keywords = donation.keywords
        eligibleForSearch = donation.eligibleForSearch
        eligibleForPrediction = donation.eligibleForPrediction
        parameters = donation.parameters
        self.donationCount = donationCount
        self.lastDonatedAt = lastDonatedAt
    }

    public var shortcutID: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}
