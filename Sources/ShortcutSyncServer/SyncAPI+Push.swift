import CoreMetrics
import Foundation
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker

extension SyncAPI {
    /// DESIGN §4: validate everything first, then one atomic, idempotent append.
    func push(_ input: Operations.Push.Input) async throws -> Operations.Push.Output {
        let (device, account) = try await requireDevice()
        guard case .json(let body) = input.body else { throw APIProblem.malformed("expected a JSON body") }
        do {
            let result = try await append(body.events, account: account, device: device)
            ServerMetrics.pushes.increment()
            ServerMetrics.eventsAppended.increment(by: result.appended)
            if result.appended > 0 { worker?.nudge() }
            return .ok(.init(body: .json(.init(lastAcceptedSeq: result.lastAcceptedSeq, position: result.position))))
        } catch {
            ServerMetrics.rejectedPushes.increment()
            throw error
        }
    }

    private func append(_ wireEvents: [Components.Schemas.Event], account: UUID, device: UUID) async throws -> AppendResult {
        guard wireEvents.count <= Limits.maxEventsPerPush else {
            throw APIProblem.tooLarge("a push holds at most \(Limits.maxEventsPerPush) events, not \(wireEvents.count)", pointer: "/events")
        }
        // Decoded once, from the request's bytes, by PushBodyMiddleware (which buildApplication installs).
        guard let decoded = PushBodyMiddleware.events else { throw APIProblem.malformed("expected a JSON body") }
        let events: [Event]
        do {
            events = try decoded.get()
        } catch let error as DecodingError {
            throw APIProblem.invalid([error.fieldError])  // its path starts at /events
        }
        let violations = EventValidator(nowMillis: now()).violations(ofBatch: events)
        guard violations.isEmpty else { throw APIProblem.invalid(violations) }
        do {
            return try await self.events.append(events, account: account, device: device)
        } catch let error as AppendError {
            throw APIProblem.conflict(error)
        }
    }
}
