import Foundation

/// Where a paged pull stopped in each table of items, and which removals it still owes.
///
/// Each table is read in `(version, key)` order, where `version` is the account version that
/// last changed the row. A row that changes between two pages gets a version above every one
/// delivered so far, so it comes again, later, in its new state: the pages, applied in order,
/// give the view of the last page's snapshot exactly, however many pushes land in between.
public struct PullPage: Sendable, Hashable {
    /// Removals (tombstones) at or below this version are not answered: a walk that began as a
    /// reset (the device held nothing) began at this version, and nothing it delivered can have
    /// been removed before it. A diff walk's rows are all above its base, so nothing is skipped.
    public var removalsAfter: Int64
    public var shortcuts: PullPosition<ShortcutID>
    public var voiceShortcuts: PullPosition<UUID>

    public init(removalsAfter: Int64, shortcuts: PullPosition<ShortcutID>, voiceShortcuts: PullPosition<UUID>) {
        self.removalsAfter = removalsAfter
        self.shortcuts = shortcuts
        self.voiceShortcuts = voiceShortcuts
    }

    /// A view complete at `version`: the next answer is every row changed after it.
    public init(completeAt version: Int64) {
        self.init(removalsAfter: version, shortcuts: PullPosition(version: version), voiceShortcuts: PullPosition(version: version))
    }

    /// A device that holds nothing, reading at `version`: every existing item, none removed.
    public init(resetAt version: Int64) {
        self.init(removalsAfter: version, shortcuts: PullPosition(version: -1), voiceShortcuts: PullPosition(version: -1))
    }
}
