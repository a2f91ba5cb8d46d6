import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Where the maintenance stands, with what an operator needs to see why an account's views lag
/// (`admin projections status`). Pushes fold their own events, so accounts are behind only after
/// an import, or while parked.
public struct ProjectionStatusReport: Sendable, Hashable {
    /// The epoch, the accounts behind and their unfolded events, the parked accounts' count.
    public var maintenance: MaintenanceStatus
    /// How long the oldest unfolded event of an account behind has waited, in seconds (0 when none waits).
    public var oldestWaitSeconds: Double = 0
    /// Accounts that a migration marked to fold again from their first event, not refolded yet
    /// (the maintenance tasks take them after the accounts behind).
    public var accountsToRefold: Int64 = 0
    /// Some of the parked accounts, the longest parked first.
    public var parked: [ParkedAccount] = []
    /// What the rebuild tables hold; nil when they are empty.
    public var rebuild: RebuildState?
    /// The compactions (automatic, `--keep-history`, and by hand) and the accounts due for one.
    public var compaction = CompactionTotals()

    public init(maintenance: MaintenanceStatus) {
        self.maintenance = maintenance
    }
}
