import Foundation
import ShortcutSyncDomain

/// An event as the log holds it.
public struct RecordedEvent: Sendable, Hashable {
    /// Place in the global log.
    public var position: Int64
    /// The appending transaction; with `position` it gives the order in which the log is read.
    public var transactionID: UInt64
    public var accountId: UUID
    /// Place in the account's stream: 1, 2, 3…
    public var streamVersion: Int64
    public var deviceId: UUID
    public var event: Event
    public var recordedAt: Date

    public var accepted: AcceptedEvent { AcceptedEvent(deviceId: deviceId, event: event) }
    public var checkpoint: LogCheckpoint { LogCheckpoint(transactionID: transactionID, position: position) }
}
