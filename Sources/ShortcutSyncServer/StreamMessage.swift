import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// What a device's live stream is told.
public enum StreamMessage: Sendable, Hashable {
    /// The views of this device's account changed (perhaps not this device's) up to the
    /// account's `version` (0: something may have changed); pull. `committedAt`: when the
    /// earliest of those changes committed (epoch milliseconds), when known, for `Freshness`.
    /// `traceparent`: that change's trace, when the process traces (`TraceParent`).
    case changed(version: Int64, committedAt: Int64? = nil, traceparent: String? = nil)
    /// Nothing happened; a comment line keeps proxies from closing the connection.
    case keepAlive
}
