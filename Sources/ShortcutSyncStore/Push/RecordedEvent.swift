import Foundation
import ShortcutSyncDomain

/// An event as the log holds it.
public struct RecordedEvent: Sendable, Hashable {
    /// Where this PostgreSQL recorded it among all accounts' events: for operators only.
    public var position: Int64
    public var accountId: UUID
    /// Its place in its account's log: 1, 2, 3…
    public var version: Int64
    public var deviceId: UUID
    public var event: Event
    public var recordedAt: Date

    public init(position: Int64, accountId: UUID, version: Int64, deviceId: UUID, event: Event, recordedAt: Date) {
        self.position = position
        self.accountId = accountId
        self.version = version
        self.deviceId = deviceId
        self.event = event
        self.recordedAt = recordedAt
    }

    public var accepted: AcceptedEvent { AcceptedEvent(deviceId: deviceId, event: event) }
}
