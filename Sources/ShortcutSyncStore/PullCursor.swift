import Foundation
import ShortcutSyncDomain

/// What a pull's cursor says: the view `device` of `account` had at account `version`, in
/// projection `epoch`, with the device's apps at `appsVersion` (0 before it reported any); and,
/// when the answer stopped at its page size, where it stopped (`page`).
/// Devices hold it as opaque text, which the HTTP layer signs.
public struct PullCursor: Sendable, Hashable {
    public var epoch: Int64
    public var account: UUID
    public var device: UUID
    public var appsVersion: Int64
    /// The account version the answer was read at. With no `page`, the device's view is
    /// complete up to it; with one, the next page goes on from there.
    public var version: Int64
    /// Where a paged answer stopped (`more: true`); nil when it was the last page.
    public var page: PullPage?

    public init(epoch: Int64, account: UUID, device: UUID, appsVersion: Int64, version: Int64, page: PullPage? = nil) {
        self.epoch = epoch
        self.account = account
        self.device = device
        self.appsVersion = appsVersion
        self.version = version
        self.page = page
    }
}

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
    init(completeAt version: Int64) {
        self.init(removalsAfter: version, shortcuts: PullPosition(version: version), voiceShortcuts: PullPosition(version: version))
    }

    /// A device that holds nothing, reading at `version`: every existing item, none removed.
    init(resetAt version: Int64) {
        self.init(removalsAfter: version, shortcuts: PullPosition(version: -1), voiceShortcuts: PullPosition(version: -1))
    }
}

/// The last row a pull delivered from one table: `(version, key)`; with no key, every row of
/// `version` (and below) was delivered.
public struct PullPosition<Key: Sendable & Hashable>: Sendable, Hashable {
    public var version: Int64
    public var key: Key?

    public init(version: Int64, key: Key? = nil) {
        self.version = version
        self.key = key
    }
}
