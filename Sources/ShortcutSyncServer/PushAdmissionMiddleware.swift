import CoreMetrics
import Foundation
import Hummingbird

/// Admits a push before a byte of its body is read: its account within its budget (`Budget`)
/// and with fewer than its limit of pushes under way (`PushesInFlight`). Refused, it is `429`
/// with `Retry-After`, and its connection closed (`EarlyRefusalMiddleware.closing`): a device
/// that pushes back to back without waiting makes the service read none of its bodies, and has
/// to connect again for each try.
///
/// It runs after `AuthenticationMiddleware` (the caller is known) and before
/// `BodyLimitMiddleware` (which reads the body).
struct PushAdmissionMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    let budget: Budget
    let inFlight: PushesInFlight

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A device's POST first (a task-local and a comparison), the path only then.
        guard case .device(_, let account) = Caller.current, request.method == .post,
              Caller.routePath(request.uri.path) == PushRoute.path else {
            return try await next(request, context)
        }
        if let wait = budget.exhausted(account) {
            ServerMetrics.pushesOverBudget.increment()
            return EarlyRefusalMiddleware.closing(context.channel, after: APIProblem.overBudget(retryAfter: wait, budget).response)
        }
        guard inFlight.enter(account) else {
            ServerMetrics.pushesOverBudget.increment()
            return EarlyRefusalMiddleware.closing(context.channel, after: APIProblem.tooManyPushesAtOnce(inFlight.limit).response)
        }
        defer { inFlight.leave(account) }
        return try await next(request, context)
    }
}
