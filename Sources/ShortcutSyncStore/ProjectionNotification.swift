import Foundation
import ShortcutSyncDomain

/// What the worker announces with `NOTIFY` after committing a batch: which views of one
/// account changed. Every server instance `LISTEN`s and wakes the streams and waiting pulls
/// of exactly those devices. A poke is only a hint; correctness comes from pull.
public struct ProjectionNotification: Sendable, Hashable, Codable {
    /// The channel every worker notifies on and every server instance listens to.
    public static let channel = "shortcut_sync_projection"

    public var accountId: UUID
    /// The account's projection version after the batch.
    public var version: Int64
    /// The greatest log position of the account's events in the batch.
    public var position: Int64
    /// The viewers whose view changed (`Viewer.unreportedID` for devices that never reported apps).
    public var changedViewers: [UUID]
    /// Every device of the account that has a view of its own (it reported its apps); any other
    /// device reads the unreported view.
    public var reportedDevices: [UUID]

    public init(accountId: UUID, version: Int64, position: Int64, changedViewers: [UUID], reportedDevices: [UUID]) {
        self.accountId = accountId
        self.version = version
        self.position = position
        self.changedViewers = changedViewers
        self.reportedDevices = reportedDevices
    }

    /// Whether the view that `deviceId` reads changed.
    public func changes(device deviceId: UUID) -> Bool {
        let viewer = reportedDevices.contains(deviceId) ? deviceId : Viewer.unreportedID
        return changedViewers.contains(viewer)
    }
}
