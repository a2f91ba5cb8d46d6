import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One row on which the rebuilt projections and the live ones disagree.
public struct ProjectionDifference: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case account, device, shortcut, voiceShortcut, donationGroup, deletionMark
    }

    public var kind: Kind
    public var accountId: UUID
    /// `bundleId/identifier` for shortcuts (and `/group` for donation groups), the id for voice
    /// shortcuts and devices, `bundleId scope value` for deletion marks, "" for accounts.
    public var key: String
    /// The row's content on each side (JSON for views), nil where that side has no such row.
    public var live: String?
    public var rebuilt: String?

    public var description: String {
        "\(kind.rawValue) \(accountId.uuidString.lowercased()) \(key): live \(live ?? "absent"), rebuilt \(rebuilt ?? "absent")"
    }
}

/// The outcome of `verify`: the live rows of every account current in the live projections
/// against its rows rebuilt from the log to the same version, and where they differ.
public struct ProjectionVerification: Sendable, Hashable {
    /// Accounts with events whose live rows were compared (their folded version is their head).
    public var accountsCompared: Int64
    /// Accounts with events whose live rows are behind their head (after an import, or parked):
    /// not compared, since their live rows are known to lag.
    public var accountsBehind: Int64
    public var differences: [ProjectionDifference]
    public var isConsistent: Bool { differences.isEmpty }

    public init(accountsCompared: Int64, accountsBehind: Int64, differences: [ProjectionDifference]) {
        self.accountsCompared = accountsCompared
        self.accountsBehind = accountsBehind
        self.differences = differences
    }
}
