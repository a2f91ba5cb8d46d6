import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// How a client talks to the service. `OpenAPISyncTransport` is the real one; tests and apps
/// may wrap it.
public protocol SyncTransport: Sendable {
    func push(_ events: [Event]) async throws -> PushOutcome
    /// Pulls from `cursor` (the whole view without one); with `waitFor`, the service first waits
    /// (up to `timeoutMillis`) until the view includes that version of the account.
    func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer
    /// The device's stream of pokes (`GET /v1/sync/stream`): yields, once per `changed` event,
    /// the account version it names (0 when it names none that can be read); finishes when the
    /// connection ends.
    func pokes() async throws -> AsyncThrowingStream<Int64, any Error>
    /// The same stream, each poke with the trace of its change when the service traces: what
    /// the client follows (`TraceContext`). Transports without traces yield `pokes()`' versions.
    func tracedPokes() async throws -> AsyncThrowingStream<Poke, any Error>
    /// Registers the device's push token (`PUT /v1/device/push-token`): the service may wake the
    /// device in the background from then on.
    func registerPushToken(_ token: String, topic: String, environment: String) async throws
    /// Forgets it (`DELETE /v1/device/push-token`).
    func deletePushToken() async throws
    /// The device's suggestions at `at` (the service's clock when nil), at most `limit`, for a
    /// device `utcOffsetMinutes` from UTC at the places `places` (tokens, its own cell first;
    /// none when it has no place key) (`GET /v1/suggestions`).
    func suggestions(at: Int64?, limit: Int, utcOffsetMinutes: Int, places: [String]) async throws -> SuggestionsAnswer
    /// The account's signed-in devices and what each has of it (`GET /v1/devices`).
    func devices() async throws -> DevicesAnswer
    /// What the service has learned of one shortcut of the device's view
    /// (`GET /v1/suggestions/habits`); nil when the shortcut is not in it (404).
    func habits(bundleId: String, identifier: String) async throws -> HabitsAnswer?
}

extension SyncTransport {
    public func tracedPokes() async throws -> AsyncThrowingStream<Poke, any Error> {
        .relaying(try await pokes()) { Poke(version: $0) }
    }

    /// Transports that cannot register a token (test doubles) refuse it.
    public func registerPushToken(_ token: String, topic: String, environment: String) async throws {
        throw SyncTransportError.refused(status: 501, detail: "this transport does not register push tokens")
    }

    public func deletePushToken() async throws {
        throw SyncTransportError.refused(status: 501, detail: "this transport does not register push tokens")
    }

    /// A transport that cannot list the account's devices says so, as a service without them would.
    public func devices() async throws -> DevicesAnswer {
        throw SyncTransportError.refused(status: 404, detail: "this transport does not list devices")
    }

    /// A transport that does not ask what was learned says so, as a service without it would.
    public func habits(bundleId: String, identifier: String) async throws -> HabitsAnswer? {
        throw SyncTransportError.refused(status: 404, detail: "this transport does not ask what was learned")
    }

    /// A transport that does not ask for suggestions says so, as a service without them would.
    public func suggestions(at: Int64?, limit: Int, utcOffsetMinutes: Int, places: [String]) async throws -> SuggestionsAnswer {
        throw SyncTransportError.refused(status: 404, detail: "this transport does not ask for suggestions")
    }
}
