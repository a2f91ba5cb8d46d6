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
    /// Of `count`, the donations compacted away (`AccountHorizon`): the log no longer holds them,
    /// so a deletion that lands after the horizon (every one does) covers them without asking it.
    public var compactedCount: Int
    /// What the compacted donations still teach, a part of `habits`, kept apart for the same reason.
    public var compactedHabits: ShortcutHabits

    public init(id: DonationGroupID, count: Int, latest: EventKey, latestVersion: Int64, coveredBelow: EventKey?,
                habits: ShortcutHabits = ShortcutHabits(), compactedCount: Int = 0, compactedHabits: ShortcutHabits = ShortcutHabits()) {
        self.id = id
        self.count = count
        self.latest = latest
        self.latestVersion = latestVersion
        self.coveredBelow = coveredBelow
        self.habits = habits
        self.compactedCount = compactedCount
        self.compactedHabits = compactedHabits
    }

    /// The row without a compacted part: what the fold decides of it, whatever the horizon.
    public var uncompacted: DonationGroupRow {
        var row = self
        row.compactedCount = 0
        row.compactedHabits = ShortcutHabits()
        return row
    }

    /// The row once every donation it counts is compacted away.
    public var compacted: DonationGroupRow {
        var row = self
        row.compactedCount = count
        row.compactedHabits = habits
        return row
    }
}
