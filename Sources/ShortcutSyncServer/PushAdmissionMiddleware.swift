import CoreMetrics
import Foundation
import Hummingbird

/// Admits a push before a byte of its body is read: its account within its budget (`Budget`)
/// and with fewer than its limit of pushes under way (`PushesInFlight`). Refused, it is `429`
/// with `Retry-After`, and its connection closed (`EarlyRefusalMiddleware.closing`): a device
/// that pushes back to back without waiting makes the service read none of its bodies, and has
/// to connect again for each try. A push of a device that comes while the wait it was told
/// still runs is held until the wait ends (at most `longestHold`), then looked at as any other,
/// except that its account then has one push under way at most. Waits are told to the device
/// that was refused: another device of the account is never held for it (issue 65, item 10).
///
/// It runs after `AuthenticationMiddleware` (the caller is known) and before
/// `BodyLimitMiddleware` (which reads the body).
struct PushAdmissionMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    let budget: Budget
    let inFlight: PushesInFlight

    /// The longest a push that did not wait is held before it is looked at again: 2 s, the
    /// bound every answer keeps under load (DESIGN §8); a longer wait told is refused again
    /// with what is left of it, and a device that does not wait sends at most one request every
    /// 2 s. Held, a push takes no place among its account's pushes under way and none of its
    /// body is read; its connection counts against its address's share, as every one does.
    static let longestHold: Duration = .seconds(2)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A device's POST first (a task-local and a comparison), the path only then.
        guard case .device(let device, let account) = Caller.current, request.method == .post,
              Caller.routePath(request.uri.path) == PushRoute.path else {
            return try await next(request, context)
        }
        // A device that did not wait as it was told is answered when the wait ends, not at
        // once: sent again at once, a refusal would cost the service a connection, a request
        // and an answer each time, as fast as the device can send them (`bench runaway`).
        let held = budget.toldWaitLeft(device)
        if let held {
            ServerMetrics.pushesHeld.increment()
            try await Task.sleep(for: min(held, Self.longestHold))
        }
        if let wait = budget.exhausted(account) {
            ServerMetrics.pushesOverBudget.increment()
            budget.tell(device, toWait: .seconds(wait))
            return EarlyRefusalMiddleware.closing(context.channel, after: APIProblem.overBudget(retryAfter: wait, budget).response)
        }
        // A held push's device does not wait as told, and such devices all come back when their
        // waits end: their account's pushes are then let in one at a time, so that what its
        // budget allows comes in one push after another, not several 100-event pushes at once
        // beside everyone else's (`bench runaway`). A device that waits as told is never held.
        let limit = held == nil ? inFlight.limit : 1
        guard inFlight.enter(account, limit: limit) else {
            ServerMetrics.pushesOverBudget.increment()
            // Its `Retry-After: 1` is a wait told to the device, as a budget's is.
            let refusal = APIProblem.tooManyPushesAtOnce(limit)
            budget.tell(device, toWait: .seconds(refusal.retryAfter ?? 1))
            return EarlyRefusalMiddleware.closing(context.channel, after: refusal.response)
        }
        defer { inFlight.leave(account) }
        return try await next(request, context)
    }
}
