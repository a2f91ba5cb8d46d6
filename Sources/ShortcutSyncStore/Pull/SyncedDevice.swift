import Foundation

/// One of an account's devices as the others see it: its name and kind, the account version its
/// latest complete pull brought it to, and when (nil: it has not pulled yet). Never its token.
public struct SyncedDevice: Sendable, Hashable {
    public var deviceId: UUID
    public var name: String
    public var platform: String
    public var syncedVersion: Int64
    public var syncedAt: Date?
    /// Whether the suggestions' learning of the device is paused now (its latest `learningPaused`).
    public var learningPaused: Bool

    public init(deviceId: UUID, name: String, platform: String, syncedVersion: Int64, syncedAt: Date?, learningPaused: Bool = false) {
        self.learningPaused = learningPaused
        self.deviceId = deviceId
        self.name = name
        self.platform = platform
        self.syncedVersion = syncedVersion
        self.syncedAt = syncedAt
    }
}
