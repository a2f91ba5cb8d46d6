import Foundation

/// What `AccountStore.revokeDevice` announces with `NOTIFY` when a device is signed out, so that
/// every server instance ends that device's open streams at once.
public struct DeviceSignedOut: Sendable, Hashable, Codable {
    public static let channel = "shortcut_sync_device_signed_out"

    public var accountId: UUID
    public var deviceId: UUID

    public init(accountId: UUID, deviceId: UUID) {
        self.accountId = accountId
        self.deviceId = deviceId
    }
}
