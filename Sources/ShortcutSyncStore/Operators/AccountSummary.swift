import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// An account as operators list it.
public struct AccountSummary: Sendable, Hashable {
    public var accountId: UUID
    public var createdAt: Date
    public var devices: Int
    public var events: Int64
    public var lastEventAt: Date?
}
