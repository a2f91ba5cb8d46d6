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
