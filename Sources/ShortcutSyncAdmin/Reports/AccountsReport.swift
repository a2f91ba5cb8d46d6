import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct AccountsReport: AdminReport {
    public struct Account: Encodable, Sendable, Hashable {
        public var accountId: UUID
        public var createdAt: Date
        public var devices: Int
        public var events: Int64
        public var lastEventAt: Date?
    }

    public var accounts: [Account]

    public var text: String {
        var table = TextTable([.init("ACCOUNT", maxWidth: 36), .init("CREATED"), .init("DEVICES", alignRight: true),
                               .init("EVENTS", alignRight: true), .init("LAST EVENT")])
        for account in accounts {
            table.append([account.accountId.lowercased, LocalTime.format(account.createdAt), "\(account.devices)",
                          "\(account.events)", LocalTime.format(account.lastEventAt)])
        }
        return table.rendered
    }
}
