import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// How a push came out.
public enum PushOutcome: Sendable, Hashable {
    /// Every event up to `lastAcceptedSeq` is stored; `version` is the account's version after
    /// the push, which includes them (a pull's `waitFor`).
    case accepted(lastAcceptedSeq: Int64, version: Int64)
    /// The service expects `expectedSeq` next: the batch did not continue its seqs (409).
    case seqMismatch(expectedSeq: Int64)
    /// The batch's event at `index` has an id the service stored with another seq or device
    /// (409, its problem pointing at `/events/<index>/id`): nothing of the batch was stored.
    case idAlreadyStored(index: Int)
}
