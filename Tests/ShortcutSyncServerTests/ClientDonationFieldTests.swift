import Foundation
@testable import ShortcutSyncClient
import ShortcutSyncDomain
import Testing

/// The client's SiriKit-shaped donations (`IntentDonation`, `UserActivityDonation`) stay their
/// own types: each has the properties of its Apple counterpart, not every field of a donation.
/// But every field of `Donation.fields` must reach the service from one of them, or be one the
/// client sets itself: a field added to the declaration and to neither fails here, by name.
@Suite struct ClientDonationFieldTests {
    /// The fields the client fills in itself rather than the app: when and where the person
    /// donated (the place as a token made under the person's key, from the donation's
    /// `location` or the device's; `PlaceKeyTests` holds it).
    static let setByTheClient: Set<String> = ["utcOffsetMinutes", "place"]

    @Test func everyFieldCanBeDonatedFromAnIntentOrAUserActivity() {
        let intent = IntentDonation(intentType: "OrderSoupIntent", identifier: "order", title: "Order soup", subtitle: "Tomato",
                                    groupIdentifier: "soups", suggestedInvocationPhrase: "Soup time", parameters: ["size": .string("large")])
        let activity = UserActivityDonation(activityType: "com.example.open", persistentIdentifier: "open", title: "Open soup",
                                            keywords: ["soup"], isEligibleForSearch: true, isEligibleForPrediction: false,
                                            suggestedInvocationPhrase: "Open it", userInfo: ["size": .string("large")])
        let donated = [intent.donation(bundleId: "com.example.soup"), activity.donation(bundleId: "com.example.soup")]
        // What a reader of a push fills in for a field the device left out.
        let absent = donated.map { Donation(bundleId: "", identifier: "", kind: $0.kind == .intent ? .userActivity : .intent, title: "") }
        for field in Donation.fields where !Self.setByTheClient.contains(field.name) {
            let reached = zip(donated, absent).contains { donation, absent in field.differs(donation, absent) }
            #expect(reached, "\(field.name) cannot be donated from IntentDonation or UserActivityDonation")
        }
    }
}
