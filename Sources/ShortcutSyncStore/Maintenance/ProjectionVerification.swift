import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The outcome of `verify`: the live rows of every account current in the live projections
/// against its rows rebuilt from the log to the same version, and where they differ.
public struct ProjectionVerification: Sendable, Hashable {
    /// Accounts with events whose live rows were compared (their folded version is their head).
    public var accountsCompared: Int64
    /// Accounts with events whose live rows are behind their head (after an import, or parked):
    /// not compared, since their live rows are known to lag.
    public var accountsBehind: Int64
    public var differences: [ProjectionDifference]
    public var isConsistent: Bool { differences.isEmpty }

    public init(accountsCompared: Int64, accountsBehind: Int64, differences: [ProjectionDifference]) {
        self.accountsCompared = accountsCompared
        self.accountsBehind = accountsBehind
        self.differences = differences
    }
}
