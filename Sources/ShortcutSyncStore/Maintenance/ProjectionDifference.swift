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
