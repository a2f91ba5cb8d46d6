import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct ImportReport: AdminReport {
    public var accountId: UUID
    public var accountsAdded: Int
    public var devicesAdded: Int
    public var eventsAdded: Int
    public var eventsAlreadyStored: Int
    /// The file's account compacted (issue 58): its horizon, and how many rows of its snapshot
    /// were stored (0 when the database held them already). Absent for an uncompacted file.
    public var compacted: CompactedHistory?
    public var snapshotRowsAdded: Int?

    public var text: String {
        let added = [accountsAdded > 0 ? "the account" : nil, devicesAdded > 0 ? plural(devicesAdded, "device") : nil,
                     (snapshotRowsAdded ?? 0) > 0 ? plural(snapshotRowsAdded ?? 0, "snapshot row") : nil,
                     eventsAdded > 0 ? plural(eventsAdded, "event") : nil].compactMap { $0 }
        let horizon = compacted.map { " (compacted through version \($0.version), \(ISO8601.format($0.time)))" } ?? ""
        guard !added.isEmpty else {
            return "Account \(accountId.lowercased)\(horizon) was already stored: nothing added (\(plural(eventsAlreadyStored, "event")) already there).\n"
        }
        return "Imported account \(accountId.lowercased)\(horizon): added \(added.joined(separator: ", "))"
            + (eventsAlreadyStored > 0 ? "; \(plural(eventsAlreadyStored, "event")) were already stored.\n" : ".\n")
    }
}
