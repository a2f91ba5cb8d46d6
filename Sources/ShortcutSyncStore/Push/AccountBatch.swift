import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One account's events to fold, all of them above `foldedVersion`, the version its rows include.
public struct AccountBatch: Sendable, Hashable {
    public var events: [FoldEvent]
    public var foldedVersion: Int64

    public init(events: [FoldEvent], foldedVersion: Int64) {
        self.events = events
        self.foldedVersion = foldedVersion
    }
}
