import Foundation

/// A shortcut as a device sees it: the attributes of its latest uncovered donation.
///
/// Its attributes are that donation's fields the view shows (`DonationField.inView`), read
/// through it (`view.title`), and its JSON is theirs with `donationCount` and `lastDonatedAt`
/// beside them, so a donation's new field reaches the view with no change here.
@dynamicMemberLookup
public struct ShortcutView: Sendable, Hashable, Codable {
    /// The latest uncovered donation, without the fields the view does not show.
    public private(set) var latest: Donation
    /// How many of its donations no deletion covers.
    public var donationCount: Int
    /// The hlc of the latest uncovered donation.
    public var lastDonatedAt: HLCTimestamp

    public init(latest donation: Donation, donationCount: Int, lastDonatedAt: HLCTimestamp) {
        latest = Self.shown(donation)
        self.donationCount = donationCount
        self.lastDonatedAt = lastDonatedAt
    }

    /// An attribute, read from the latest donation (`view.title`); a field the view does not
    /// show reads as absent.
    public subscript<Value>(dynamicMember field: KeyPath<Donation, Value>) -> Value {
        latest[keyPath: field]
    }

    public var shortcutID: ShortcutID { ShortcutID(bundleId: latest.bundleId, identifier: latest.identifier) }

    /// `donation` with only the fields a view shows: a field it hides is its absent value, so
    /// that two views of donations that differ only there are equal.
    private static func shown(_ donation: Donation) -> Donation {
        var shown = Donation.unread
        for field in Donation.fields where field.inView {
            field.copy(from: donation, to: &shown)
        }
        return shown
    }

    /// The keys of its counts, beside its donation's fields' in one container: a second
    /// container cost each view a fifth more to decode (views are decoded for every pull).
    private static let donationCountKey = DonationField.Key(stringValue: "donationCount")
    private static let lastDonatedAtKey = DonationField.Key(stringValue: "lastDonatedAt")

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DonationField.Key.self)
        var latest = Donation.unread
        for field in Donation.fields where field.inView {
            try field.decode(into: &latest, from: container)
        }
        self.latest = latest
        donationCount = try container.decode(Int.self, forKey: Self.donationCountKey)
        lastDonatedAt = try container.decode(HLCTimestamp.self, forKey: Self.lastDonatedAtKey)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DonationField.Key.self)
        for field in Donation.fields where field.inView {
            try field.encode(latest, to: &container)
        }
        try container.encode(donationCount, forKey: Self.donationCountKey)
        try container.encode(lastDonatedAt, forKey: Self.lastDonatedAtKey)
    }
}
