import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// `admin projections status`: the epoch, the accounts whose projections are behind their head
/// and by how many events, the parked accounts, and what the rebuild tables hold. Pushes fold
/// their own events, so accounts are behind only after an import, or while parked.
public struct StatusReport: AdminReport {
    /// A parked account: its fold failed at `failedVersion`, and is tried again after a pause.
    public struct Parked: Encodable, Sendable, Hashable {
        public var accountId: UUID
        public var failedVersion: Int64
        public var error: String
        public var attempts: Int
    }

    /// The rebuild tables: accounts written by the running (or the last) rebuild.
    public struct Rebuild: Encodable, Sendable, Hashable {
        public var accountsRebuilt: Int64
        public var accountsWithEvents: Int64
        public var startedAt: Date?
    }

    public var epoch: Int64
    public var accountsBehind: Int64
    /// Events of the accounts behind that the projections do not include yet.
    public var eventsBehind: Int64
    /// How long the oldest of them has waited, in seconds (0 when none waits).
    public var oldestWaitSeconds: Double
    public var parkedAccounts: Int64
    /// Accounts an upgrade's migration marked to fold again from their first event, still to do.
    public var accountsToRefold: Int64
    /// The first of them, the longest parked first.
    public var parked: [Parked]
    public var rebuild: Rebuild?
    /// Compactions of accounts' history (by the maintenance tasks past `--keep-history`, and by
    /// hand): the accounts compacted, the events and bytes removed, the accounts due for one.
    public var compaction: CompactionTotals

    init(_ report: ProjectionStatusReport) {
        epoch = report.maintenance.epoch
        accountsBehind = report.maintenance.accountsBehind
        eventsBehind = report.maintenance.eventsBehind
        oldestWaitSeconds = report.oldestWaitSeconds
        parkedAccounts = report.maintenance.parkedAccounts
        accountsToRefold = report.accountsToRefold
        parked = report.parked.map { Parked(accountId: $0.accountId, failedVersion: $0.failedVersion, error: $0.error, attempts: $0.attempts) }
        compaction = report.compaction
        rebuild = report.rebuild.map { Rebuild(accountsRebuilt: $0.accountsRebuilt, accountsWithEvents: $0.accountsWithEvents, startedAt: $0.startedAt) }
    }

    public var text: String {
        var lines = [
            "epoch            \(epoch)",
            "accounts behind  \(accountsBehind)" + (accountsBehind == 0 ? "" : String(format: " (oldest unfolded event recorded %.1f s ago)", oldestWaitSeconds)),
            "events behind    \(eventsBehind)",
            "parked accounts  \(parkedAccounts)",
        ]
        if accountsToRefold > 0 {
            lines.insert("to refold        \(plural(Int(accountsToRefold), "account")) (an upgrade added what the fold derives; the maintenance tasks refold them)",
                         at: 3)
        }
        for account in parked {
            lines.append("                 \(account.accountId.lowercased) at version \(account.failedVersion), \(plural(account.attempts, "attempt")): \(TextTable.shorten(account.error, to: 80))")
        }
        lines.append("compacted        \(plural(Int(compaction.accountsCompacted), "account")), \(plural(Int(compaction.eventsCompacted), "event")) removed"
                     + " (\(compaction.bytesCompacted) bytes) in \(plural(Int(compaction.compactions), "compaction"))")
        lines.append("compaction due   \(plural(Int(compaction.accountsDue), "account")) to look at again (history past the retention that may be worth compacting)"
                     + (compaction.accountsNotLookedAt == 0 ? "" : ", \(compaction.accountsNotLookedAt) never looked at"))
        if let rebuild {
            let since = rebuild.startedAt.map { ", started \(LocalTime.format($0))" } ?? ""
            lines.append("rebuild tables   \(rebuild.accountsRebuilt) of \(plural(Int(rebuild.accountsWithEvents), "account")) with events\(since)")
        } else {
            lines.append("rebuild tables   empty")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
