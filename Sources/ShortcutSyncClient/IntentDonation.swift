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
    /// Where the interaction happened, as `INRelevantShortcut`'s location relevance names a
    /// place: the donation carries its cell's token (`PlaceKey`), not the coordinate. Nil: the
    /// device's location now (`Configuration.location`), if any.
    public var location: PlaceCoordinate?

    public init(intentType: String, identifier: String, title: String, subtitle: String? = nil, groupIdentifier: String? = nil,
                suggestedInvocationPhrase: String? = nil, parameters: [String: JSONValue] = [:], location: PlaceCoordinate? = nil) {
        self.intentType = intentType
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.groupIdentifier = groupIdentifier
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.parameters = parameters
        self.location = location
    }

    func donation(bundleId: String) -> Donation {
        Donation(bundleId: bundleId, identifier: identifier, kind: .intent, intentType: intentType, title: title, subtitle: subtitle,
                 groupIdentifier: groupIdentifier, suggestedInvocationPhrase: suggestedInvocationPhrase, parameters: parameters)
    }
}
