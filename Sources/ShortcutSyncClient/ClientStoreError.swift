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
    /// A place is forgotten by its token, made under the person's place key: this device has none.
    case noPlaceKey
    /// A place given as a coordinate that is not one (not finite, or beyond ±90° of latitude).
    case notACoordinate

    var description: String {
        switch self {
        case .seqOutOfRange(let seq): "the service expects seq \(seq), outside 1…\(Limits.seqRange.upperBound)"
        case .unknownChange(let id): "no change \(id) is known here (not made on this device, or among the oldest, no longer kept)"
        case .notPausable: "learning is paused for the account or for a device; to stop one shortcut or one place teaching, forget it"
        case .noPlaceKey: "this device has no place key (Configuration.placeKey): it cannot name a place"
        case .notACoordinate: "the coordinate is not one: latitude and longitude must be finite, the latitude within ±90°"
        }
    }
}
