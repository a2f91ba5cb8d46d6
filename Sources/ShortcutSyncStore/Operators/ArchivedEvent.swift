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

    public init(line: Int, deviceId: UUID, recordedAt: Date, event: Event) {
        self.line = line
        self.deviceId = deviceId
        self.recordedAt = recordedAt
        self.event = event
    }
}
