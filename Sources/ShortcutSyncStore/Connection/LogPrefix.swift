import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Which prefix of an account's log a replay folds.
public enum LogPrefix: Sendable, Hashable {
    /// Every event committed now.
    case all
    /// The account's events at versions up to and including this one: the view at that version.
    case throughVersion(Int64)
    /// Events recorded (accepted by the service) at or before this time.
    case recordedBy(Date)
}
