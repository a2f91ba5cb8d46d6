import Hummingbird

/// Runs every request that needs the database through `DatabaseReach.whileReachable`: refused
/// with `503` and `Retry-After` at once while the database is known to be away, and within
/// moments of its going when the request was already waiting on it.
///
/// It sits before `AuthenticationMiddleware`, whose token lookup is the first wait on the
/// database. A stream is bounded only until its response begins: once open, it outlives an
/// outage and is poked again when the database returns. Readiness answers for itself.
struct DatabaseReachMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    let reach: DatabaseReach

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The routes that take a token are the ones that read or write the database.
        guard Caller.required(method: request.method.rawValue, path: request.uri.path) != nil else {
            return try await next(request, context)
        }
        do {
            return try await withoutActuallyEscaping(next) { next in
                // `next` runs in a child task that ends before `whileReachable` returns, so it
                // never outlives this call (which is what `withoutActuallyEscaping` requires).
                let call = UncheckedSendableCall(next: next, request: request, context: context)
                return try await reach.whileReachable { try await call() }
            }
        } catch is DatabaseAway {
            throw APIProblem.unavailable()
        }
    }
}

/// The rest of the middleware chain with its arguments, handed to the child task that runs it.
///
/// The chain's closure is not `Sendable` only because Hummingbird does not declare it so; it is
/// called once, from one task, while the caller waits.
private struct UncheckedSendableCall: @unchecked Sendable {
    let next: (Request, SyncRequestContext) async throws -> Response
    let request: Request
    let context: SyncRequestContext

    func callAsFunction() async throws -> Response {
        try await next(request, context)
    }
}
