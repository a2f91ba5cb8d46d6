import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Where the worker stands, with what an operator needs to see why it lags.
public struct ProjectionStatusReport: Sendable, Hashable {
    public var checkpoint: ProjectionCheckpoint
    public var headPosition: Int64
    /// Committed events the live projections have not folded yet.
    public var pendingEvents: Int64
    /// How long the oldest of them has waited, in seconds (0 when none waits).
    public var lagSeconds: Double
    public var parkedAccounts: Int64
    /// Committed events that cannot be read yet because an older transaction is still open.
    public var eventsBehindHorizon: Int64
    /// That transaction, when `eventsBehindHorizon` is not 0.
    public var horizonHolder: HorizonHolder?
}
