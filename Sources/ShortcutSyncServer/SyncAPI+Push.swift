import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// The generated server's entry for `push`, which `APIProtocol` requires but no route reaches:
    /// `buildApplication` leaves it out of the generated routes (`GeneratedRoutes`) and `PushRoute`
    /// answers the path from the request's bytes.
    func push(_ input: Operations.Push.Input) async throws -> Operations.Push.Output {
        throw APIProblem(status: 500, title: "Internal Server Error", detail: "push is answered by PushRoute, which is not installed")
    }

    /// DESIGN §4: validate everything first, then one atomic, idempotent append that folds itself.
    func push(_ events: [Event], account: UUID, device: UUID) async throws -> AppendResult {
        do {
            guard events.count <= Limits.maxEventsPerPush else {
                throw APIProblem.tooLarge("a push holds at most \(Limits.maxEventsPerPush) events, not \(events.count)", pointer: "/events")
            }
            let violations = EventValidator(nowMillis: now()).violations(ofBatch: events)
            guard violations.isEmpty else { throw APIProblem.invalid(violations) }
            let result: AppendResult
            do {
                result = try await self.events.append(events, account: account, device: device)
            } catch AppendError.accountUnknown {
                // Erased while this push waited: its token no longer holds.
                throw APIProblem.unauthorized
            } catch let error as AppendError {
                throw APIProblem.conflict(error)
            } catch let limit as PersonLimit {
                throw APIProblem.limitReached(limit)
            } catch let invalid as ValidationError {
                // What only the database can tell (a learning scope's device is not the account's).
                throw APIProblem.invalid(invalid.errors)
            }
            ServerMetrics.pushes.increment()
            ServerMetrics.eventsAppended.increment(by: result.appended)
            if result.overKeptRows { ServerMetrics.pushesOverKeptRows.increment() }
            if result.appended > 0 {
                // Folded in the push: every device may pull it now. Not folded (the account is
                // behind, after an import or parked): the maintenance tasks fold it and announce it.
                if result.folded {
                    announcer.announce(account: account, version: result.version, committedAt: now(), traceparent: TraceParent.of())
                } else {
                    accountBehind()
                }
            }
            return result
        } catch {
            ServerMetrics.rejectedPushes.increment()
            throw error
        }
    }
}
