import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// An account's head as a fold read saw it (DESIGN §6), with the pushing device's last seq.
struct AccountHead: Sendable, Hashable {
    var version: Int64
    var foldedVersion: Int64
    var deviceLastSeq: Int64
}
