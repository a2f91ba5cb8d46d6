import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct ImportReport: AdminReport {
    public var accountId: UUID
    public var accountsAdded: Int
    public var devicesAdded: Int
    public var eventsAdded: Int
    public var eventsAlreadyStored: Int

    public var text: String {
        let added = [accountsAdded > 0 ? "the account" : nil, devicesAdded > 0 ? plural(devicesAdded, "device") : nil,
                     eventsAdded > 0 ? plural(eventsAdded, "event") : nil].compactMap { $0 }
        guard !added.isEmpty else {
            return "Account \(accountId.lowercased) was already stored: nothing added (\(plural(eventsAlreadyStored, "event")) already there).\n"
        }
        return "Imported account \(accountId.lowercased): added \(added.joined(separator: ", "))"
            + (eventsAlreadyStored > 0 ? "; \(plural(eventsAlreadyStored, "event")) were already stored.\n" : ".\n")
    }
}
