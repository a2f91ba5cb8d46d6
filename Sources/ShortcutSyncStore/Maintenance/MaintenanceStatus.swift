import Foundation

/// How far the projections are from the log: accounts whose folded version is behind their head
/// (after an import, or parked) wait for the maintenance tasks. A push of a current account
/// folds itself, so under any load of pushes this stays at zero.
public struct MaintenanceStatus: Sendable, Hashable {
    /// Raised when a rebuild is promoted: cursors of another epoch get the whole view.
    public var epoch: Int64
    public var accountsBehind: Int64
    /// Events of those accounts not folded yet.
    public var eventsBehind: Int64
    public var parkedAccounts: Int64

    public init(epoch: Int64, accountsBehind: Int64, eventsBehind: Int64, parkedAccounts: Int64) {
        self.epoch = epoch
        self.accountsBehind = accountsBehind
        self.eventsBehind = eventsBehind
        self.parkedAccounts = parkedAccounts
    }
}
