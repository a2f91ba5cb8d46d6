import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Which events `OperatorStore.events` lists.
public struct EventFilter: Sendable, Hashable {
    public var account: UUID
    public var device: UUID?
    public var type: EventType?
    /// Only events at account versions greater than this; nil for every event (or, when
    /// following, from what commits next).
    public var afterVersion: Int64?

    public init(account: UUID, device: UUID? = nil, type: EventType? = nil, afterVersion: Int64? = nil) {
        self.account = account
        self.device = device
        self.type = type
        self.afterVersion = afterVersion
    }
}
