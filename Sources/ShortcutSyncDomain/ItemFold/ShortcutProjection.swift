import Foundation

/// A shortcut's projected row, apart from the attributes of its latest donation, which are
/// those of the event at `latestVersion`.
public struct ShortcutProjection: Sendable, Hashable {
    public var donationCount: Int
    public var latest: EventKey
    public var latestVersion: Int64

    public init(donationCount: Int, latest: EventKey, latestVersion: Int64) {
        self.donationCount = donationCount
        self.latest = latest
        self.latestVersion = latestVersion
    }

    public var lastDonatedAt: HLCTimestamp { latest.hlc }

    /// The shortcut of the donation groups `rows` (all of one shortcut): nil when none is left.
    public init?(groups rows: some Sequence<DonationGroupRow>) {
        var count = 0
        var latest: DonationGroupRow?
        for row in rows where row.count > 0 {
            count += row.count
            if latest.map({ row.latest > $0.latest }) ?? true { latest = row }
        }
        guard let latest else { return nil }
        self.init(donationCount: count, latest: latest.latest, latestVersion: latest.latestVersion)
    }
}
