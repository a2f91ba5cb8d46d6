import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Which set of projection tables a fold writes: the live ones, the rebuild beside them, or the
/// snapshots of compacted accounts (their rows at their horizon, migration 0025).
public enum ProjectionTables: Sendable, Hashable {
    case live
    case rebuild
    case snapshot

    /// The tables of the projections, the same in both sets; the checkpoint apart.
    static let names = [
        "projection_accounts", "projection_devices", "projection_shortcuts", "projection_voice_shortcuts",
        "projection_donation_groups", "projection_deletion_marks",
    ]

    /// Prefixed to the table names. The live tables stay unqualified, in the schema of the events.
    var prefix: String {
        switch self {
        case .live: ""
        case .rebuild: "rebuild."
        case .snapshot: "snapshot."
        }
    }
}
