import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// One event of an import, with the line of the file it came from.
public struct ArchivedEvent: Sendable, Hashable {
    public var line: Int
    public var deviceId: UUID
    public var recordedAt: Date
    public var event: Event
    /// Its version in the exporting database's log: where an import of a compacted account
    /// stores it (the snapshot's rows name the versions of its events); nil when the file has none.
    public var version: Int64?

    public init(line: Int, deviceId: UUID, recordedAt: Date, event: Event, version: Int64? = nil) {
        self.line = line
        self.version = version
        self.deviceId = deviceId
        self.recordedAt = recordedAt
        self.event = event
    }
}
