import Foundation

/// What later events need of one donation group: how many of its donations no deletion covers,
/// the latest of them, and the key below which deletions cover it. Never more, however long its
/// history: a deletion that lands among older donations has them counted in the log instead.
public struct DonationGroupRow: Sendable, Hashable {
    public var id: DonationGroupID
    /// Uncovered donations; a row with none is not kept.
    public var count: Int
    public var latest: EventKey
    /// The account version of the latest uncovered donation, whose attributes the shortcut shows.
    public var latestVersion: Int64
    /// The greatest key of the deletions selecting this group, when the row was written: every
    /// donation below it is covered, every counted one is at or above it.
    public var coveredBelow: EventKey?
    /// The suggestion sums of its uncovered eligible donations, per device (DESIGN §3): sums,
    /// so a row holds them whatever the group's history, and a deletion takes back exactly
    /// what the donations it covers added.
    public var habits: ShortcutHabits

    public init(id: DonationGroupID, count: Int, latest: EventKey, latestVersion: Int64, coveredBelow: EventKey?,
                habits: ShortcutHabits = ShortcutHabits()) {
        self.id = id
        self.count = count
        self.latest = latest
        self.latestVersion = latestVersion
        self.coveredBelow = coveredBelow
        self.habits = habits
    }
}
