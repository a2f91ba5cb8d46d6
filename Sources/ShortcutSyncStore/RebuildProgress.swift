import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How far a rebuild has come, handed to its progress callback after every page.
public struct RebuildProgress: Sendable, Hashable {
    /// Events replayed so far by this call.
    public var processed: Int
    public var checkpoint: LogCheckpoint
    /// The log's greatest position when the page was read.
    public var headPosition: Int64

    public init(processed: Int, checkpoint: LogCheckpoint, headPosition: Int64) {
        self.processed = processed
        self.checkpoint = checkpoint
        self.headPosition = headPosition
    }
}
