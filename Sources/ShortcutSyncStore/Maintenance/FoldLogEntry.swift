import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One event of the log as the fold reads it: what it changes, without the attributes of a
/// donation (the projections copy those from the log, by version, for latest donations only).
public struct FoldLogEntry: Sendable, Hashable {
    public var accountId: UUID
    public var event: FoldEvent

    public init(accountId: UUID, event: FoldEvent) {
        self.accountId = accountId
        self.event = event
    }

    /// The same event, read whole.
    public init(_ recorded: RecordedEvent) {
        self.init(accountId: recorded.accountId, event: FoldEvent(recorded.accepted, version: recorded.version))
    }
}
