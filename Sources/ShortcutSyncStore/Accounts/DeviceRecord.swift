import Foundation
import Logging
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// A device as the service knows it.
public struct DeviceRecord: Sendable, Hashable {
    public var deviceId: UUID
    public var accountId: UUID
    public var name: String
    public var platform: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(deviceId: UUID, accountId: UUID, name: String, platform: String, createdAt: Date, revokedAt: Date?) {
        self.deviceId = deviceId
        self.accountId = accountId
        self.name = name
        self.platform = platform
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
