import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The open transaction that holds the log's horizon back: nothing it may still commit can be
/// read past, so events committed after it wait for it to end.
public struct HorizonHolder: Sendable, Hashable {
    public var pid: Int32
    public var applicationName: String
    public var state: String
    /// Seconds since its transaction began.
    public var ageSeconds: Double
}
