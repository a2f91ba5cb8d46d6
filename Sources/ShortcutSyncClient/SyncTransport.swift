import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// How a client talks to the service. `OpenAPISyncTransport` is the real one; tests and apps
/// may wrap it.
public protocol SyncTransport: Sendable {
    func push(_ events: [Event]) async throws -> PushOutcome
    func pull(cursor: String?, waitFor position: Int64?, timeoutMillis: Int?) async throws -> PullAnswer
    /// The device's stream of pokes (`GET /v1/sync/stream`): yields once per `changed` event,
    /// finishes when the connection ends.
    func pokes() async throws -> AsyncThrowingStream<Void, any Error>
}
