import Foundation

/// What the rebuild tables hold: the accounts a rebuild (running now, or the last one) wrote.
public struct RebuildState: Sendable, Hashable {
    /// Accounts with rows in the rebuild tables.
    public var accountsRebuilt: Int64
    /// Accounts with at least one event now.
    public var accountsWithEvents: Int64
    /// When the rebuild tables were last emptied for a rebuild.
    public var startedAt: Date?

    public init(accountsRebuilt: Int64, accountsWithEvents: Int64, startedAt: Date?) {
        self.accountsRebuilt = accountsRebuilt
        self.accountsWithEvents = accountsWithEvents
        self.startedAt = startedAt
    }
}
