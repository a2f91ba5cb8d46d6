import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Why the projections refused to go on.
public enum ProjectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint is not where the batch starts: another writer moved it. Nothing was written.
    case checkpointMoved(expected: LogCheckpoint, found: LogCheckpoint)
    /// The live projections did not reach the rebuild's checkpoint in time (is a worker running?).
    case liveProjectionsBehind(live: LogCheckpoint, rebuilt: LogCheckpoint)

    public var description: String {
        switch self {
        case .checkpointMoved(let expected, let found):
            "the projection checkpoint is at \(found), not at \(expected) where the batch starts: another worker moved it"
        case .liveProjectionsBehind(let live, let rebuilt):
            "the live projections stayed at \(live), behind the rebuild at \(rebuilt): is a worker running?"
        }
    }
}
