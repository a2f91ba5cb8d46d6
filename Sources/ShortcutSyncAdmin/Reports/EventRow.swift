import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// One event as `admin events` and `admin history` show it.
public struct EventRow: Encodable, Sendable, Hashable {
    /// Its place in its account's log (1, 2, 3…): what `--after` and `shortcuts --at` take.
    public var version: Int64
    /// Where this PostgreSQL recorded it among all accounts' events (informative).
    public var position: Int64
    public var recordedAt: Date
    public var deviceId: UUID
    /// The event as the device pushed it (DESIGN §2).
    public var event: Event

    public init(_ recorded: RecordedEvent) {
        version = recorded.version
        position = recorded.position
        recordedAt = recorded.recordedAt
        deviceId = recorded.deviceId
        event = recorded.event
    }

    static let columns: [TextTable.Column] = [
        .init("VERSION", alignRight: true), .init("RECORDED"), .init("DEVICE", maxWidth: 8), .init("SEQ", alignRight: true),
        .init("TYPE"), .init("WHAT", maxWidth: 60),
    ]

    var cells: [String] {
        [String(version), LocalTime.format(recordedAt), deviceId.short, String(event.seq), event.type.rawValue, event.body.summary]
    }
}
