import Foundation
import ShortcutSyncDomain

/// What an append expects of the account's stream.
public enum ExpectedVersion: Sendable, Hashable {
    /// Whatever the stream holds; concurrent appends to the account are retried.
    case any
    /// The stream must hold exactly this many events (0: none yet).
    case exactly(Int64)
}
