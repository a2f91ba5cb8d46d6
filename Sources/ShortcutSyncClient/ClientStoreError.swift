import Foundation
import GRDB
import ShortcutSyncDomain

/// What the client's storage refuses to do.
enum ClientStoreError: Error, CustomStringConvertible {
    /// The service asked for a seq outside 1…2^53 (DESIGN §5): no outbox can be numbered from there.
    case seqOutOfRange(Int64)
    /// A change this device did not make, or made so long ago that its record was let go
    /// (`ClientStore.storedChangesKept`).
    case unknownChange(UUID)
    /// Learning is paused for the account or a device; a shortcut's is forgotten instead.
    case notPausable

    var description: String {
        switch self {
        case .seqOutOfRange(let seq): "the service expects seq \(seq), outside 1…\(Limits.seqRange.upperBound)"
        case .unknownChange(let id): "no change \(id) is known here (not made on this device, or among the oldest, no longer kept)"
        case .notPausable: "learning is paused for the account or for a device; to stop one shortcut teaching, forget it"
        }
    }
}
