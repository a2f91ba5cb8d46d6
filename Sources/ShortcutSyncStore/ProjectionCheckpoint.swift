import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How far the projections have folded the log, and which generation of them is live.
public struct ProjectionCheckpoint: Sendable, Hashable {
    public var log: LogCheckpoint
    /// Raised when the projections are replaced by a rebuild; older cursors then get the whole view.
    public var epoch: Int64

    public init(log: LogCheckpoint, epoch: Int64) {
        self.log = log
        self.epoch = epoch
    }
}
