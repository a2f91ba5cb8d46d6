import Foundation
import ShortcutSyncAPI

/// The account's signed-in devices and what each has of it (`GET /v1/devices`): what an app
/// shows as "synced to your iPad two minutes ago".
public struct DevicesAnswer: Sendable, Hashable {
    /// One device: its name and kind, the account version its latest complete pull brought it to
    /// (0 before its first), and when it pulled (at most a minute old while it keeps pulling).
    public struct Device: Sendable, Hashable {
        public var deviceId: UUID
        public var name: String
        public var platform: String
        public var syncedVersion: Int64
        public var syncedAt: Date?
        /// Whether the suggestions' learning of this device is paused (`pauseLearning(_:)`).
        public var learningPaused: Bool
    }

    /// The account's version now.
    public var version: Int64
    /// Whether the suggestions' learning of the whole account is paused.
    public var learningPaused: Bool
    public var devices: [Device]

    init(_ list: Components.Schemas.DeviceList) {
        version = list.version
        learningPaused = list.learning == .paused
        devices = list.devices.compactMap { device in
            UUID(uuidString: device.deviceId).map {
                Device(deviceId: $0, name: device.name, platform: device.platform.rawValue,
                       syncedVersion: device.syncedVersion, syncedAt: device.syncedAt, learningPaused: device.learning == .paused)
            }
        }
    }
}
