import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How far a rebuild has come, handed to its progress callback after every write.
public struct RebuildProgress: Sendable, Hashable {
    /// Events folded into the rebuild tables so far by this rebuild (its catch-up included).
    public var processed: Int
    /// The events the log held when the rebuild began.
    public var total: Int
    /// Accounts whose rows the rebuild wrote so far (an account caught up counts again).
    public var accounts: Int

    public init(processed: Int, total: Int, accounts: Int) {
        self.processed = processed
        self.total = total
        self.accounts = accounts
    }
}
