import Foundation
import ShortcutSyncDomain

/// The event log as devices write to it (DESIGN §4): pushes and sign-outs, each folded into the
/// views as it is appended. `PostgresEventStore` is the implementation on PostgreSQL; the HTTP
/// service holds this protocol, not it.
public protocol EventStore: Sendable {
    /// Appends a device's batch atomically and idempotently, and folds it in the same transaction
    /// unless the account is behind (`AppendResult.folded`).
    @discardableResult
    func append(_ events: [Event], account: UUID, device: UUID) async throws -> AppendResult
    /// Signs a device out: its token is revoked and its sign-out appended to the log; false if
    /// the account has no such device.
    func signOut(device: UUID, account: UUID, wallMillis: Int64) async throws -> Bool
}

extension PostgresEventStore: EventStore {}
