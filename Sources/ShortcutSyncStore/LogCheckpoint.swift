import Foundation
import ShortcutSyncDomain

/// How far a reader of the log has come: the `(transactionID, position)` of the last event it read.
public struct LogCheckpoint: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var transactionID: UInt64
    public var position: Int64

    public init(transactionID: UInt64, position: Int64) {
        self.transactionID = transactionID
        self.position = position
    }

    public static let start = LogCheckpoint(transactionID: 0, position: 0)

    public static func < (lhs: LogCheckpoint, rhs: LogCheckpoint) -> Bool {
        (lhs.transactionID, lhs.position) < (rhs.transactionID, rhs.position)
    }

    public var description: String { "\(transactionID)/\(position)" }
}
