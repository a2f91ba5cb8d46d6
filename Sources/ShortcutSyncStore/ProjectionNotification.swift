import Foundation

/// What the worker announces with `NOTIFY` after committing a batch: one account's views
/// changed. Every server instance `LISTEN`s and pokes every stream and waiting pull of that
/// account; a poke is only a hint, correctness comes from pull.
///
/// Its size is fixed whatever the number of the account's devices: PostgreSQL refuses payloads
/// of 8000 bytes, and a refused `NOTIFY` would roll the whole batch back.
public struct ProjectionNotification: Sendable, Hashable, Codable {
    /// The channel every worker notifies on and every server instance listens to.
    public static let channel = "shortcut_sync_projection"

    public var accountId: UUID
    /// The account's projection version after the batch.
    public var version: Int64
    /// The greatest log position of the account's events in the batch.
    public var position: Int64

    public init(accountId: UUID, version: Int64, position: Int64) {
        self.accountId = accountId
        self.version = version
        self.position = position
    }
}
