import Foundation
import GRDB
import ShortcutSyncDomain

/// What the client's storage refuses to do.
enum ClientStoreError: Error, CustomStringConvertible {
    /// The service asked for a seq outside 1…2^53 (DESIGN §5): no outbox can be numbered from there.
    case seqOutOfRange(Int64)

    var description: String {
        switch self {
        case .seqOutOfRange(let seq): "the service expects seq \(seq), outside 1…\(Limits.seqRange.upperBound)"
        }
    }
}
