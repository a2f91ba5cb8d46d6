import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// What `admin projections rebuild` did.
public struct RebuildReport: AdminReport {
    /// Events folded into the rebuilt projections (those pushed meanwhile included).
    public var eventsReplayed: Int
    /// Accounts whose rows the rebuild wrote.
    public var accounts: Int
    /// The epoch the rebuilt projections are live in.
    public var epoch: Int64
    public var seconds: Double

    public var text: String {
        "Rebuilt the projections from \(eventsReplayed) events of \(plural(accounts, "account")) in \(String(format: "%.1f", seconds)) s; they are live in epoch \(epoch) (every device's next pull gets its whole view).\n"
    }
}
