import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// What `admin compact` did (or, with `--dry-run`, would do), account by account, and the total.
public struct CompactReport: AdminReport {
    public struct Account: Encodable, Sendable, Hashable {
        public var accountId: UUID
        /// `compacted`, `nothingOlder`, `behind`, `noCleanCut` or `overtaken` (`Compaction.Outcome`).
        public var outcome: String
        /// The account's horizon after the command (before it, when nothing was compacted); 0: none.
        public var horizonVersion: Int64
        /// The horizon's time (the greatest clock among the compacted events), when there is one.
        public var horizonTime: Date?
        public var eventsRemoved: Int
        public var bytesRemoved: Int64
        /// Events at or below the horizon kept: groups' latest donations and devices' last events.
        public var eventsKept: Int

        init(_ compaction: Compaction) {
            accountId = compaction.account
            outcome = compaction.outcome.rawValue
            horizonVersion = compaction.horizonVersion
            horizonTime = compaction.horizonWallMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            eventsRemoved = compaction.eventsRemoved
            bytesRemoved = compaction.bytesRemoved
            eventsKept = compaction.eventsKept
        }
    }

    public var dryRun: Bool
    public var accounts: [Account]
    public var accountsCompacted: Int { accounts.filter { $0.outcome == Compaction.Outcome.compacted.rawValue }.count }
    public var eventsRemoved: Int { accounts.reduce(0) { $0 + $1.eventsRemoved } }
    public var bytesRemoved: Int64 { accounts.reduce(0) { $0 + $1.bytesRemoved } }
    public var eventsKept: Int { accounts.reduce(0) { $0 + $1.eventsKept } }

    enum CodingKeys: String, CodingKey {
        case dryRun, accounts, accountsCompacted, eventsRemoved, bytesRemoved, eventsKept
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(accountsCompacted, forKey: .accountsCompacted)
        try container.encode(eventsRemoved, forKey: .eventsRemoved)
        try container.encode(bytesRemoved, forKey: .bytesRemoved)
        try container.encode(eventsKept, forKey: .eventsKept)
    }

    /// What an outcome says in the table.
    func said(_ outcome: String) -> String {
        switch Compaction.Outcome(rawValue: outcome) {
        case .compacted: dryRun ? "would compact" : "compacted"
        case .nothingOlder: "nothing older"
        case .behind: "behind (folded first)"
        case .noCleanCut: "no clean cut"
        case .overtaken: "compacted meanwhile by another"
        case nil: outcome
        }
    }

    public var text: String {
        var table = TextTable([.init("ACCOUNT", maxWidth: 36), .init("OUTCOME"), .init("HORIZON", alignRight: true), .init("HORIZON TIME"),
                               .init(dryRun ? "WOULD REMOVE" : "REMOVED", alignRight: true), .init("BYTES", alignRight: true),
                               .init("KEPT", alignRight: true)])
        for account in accounts {
            table.append([account.accountId.lowercased, said(account.outcome), account.horizonVersion == 0 ? "-" : "\(account.horizonVersion)",
                          LocalTime.format(account.horizonTime), "\(account.eventsRemoved)", "\(account.bytesRemoved)", "\(account.eventsKept)"])
        }
        let verb = dryRun ? "Would compact" : "Compacted"
        let total = "\(verb) \(plural(accountsCompacted, "account")) of \(accounts.count): \(dryRun ? "would remove" : "removed") "
            + "\(plural(eventsRemoved, "event")) (\(bytesRemoved) bytes), kept \(eventsKept) at or below the horizon.\n"
        return table.rendered + "\n" + total
    }
}
