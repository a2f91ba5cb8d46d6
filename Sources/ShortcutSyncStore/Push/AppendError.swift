import Foundation
import ShortcutSyncDomain

/// Why an append was refused. Nothing of a refused batch is stored.
public enum AppendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The batch does not continue the device's seqs without a gap. `index` is the batch
    /// position of the first event at fault.
    case seqNotContiguous(index: Int, expectedSeq: Int64, lastAcceptedSeq: Int64)
    /// A seq accepted before arrived again with another event id.
    case seqReused(index: Int, seq: Int64, lastAcceptedSeq: Int64)
    /// An event id accepted before arrived again with another seq (or from another device).
    case idReused(index: Int, id: UUID)
    /// The account has no head: it was never made (`AccountStore.createAccount` makes the head
    /// with the account), or it was erased.
    case accountUnknown

    public var description: String {
        switch self {
        case .seqNotContiguous(let index, let expected, let last):
            "event \(index) breaks the device's sequence: expected seq \(expected) (last accepted seq is \(last))"
        case .seqReused(let index, let seq, let last):
            "event \(index) reuses seq \(seq), which was accepted with another id (last accepted seq is \(last))"
        case .idReused(let index, let id):
            "event \(index) reuses id \(id.uuidString.lowercased()), which was accepted with another seq"
        case .accountUnknown:
            "the account does not exist (it was erased, or never made)"
        }
    }
}
