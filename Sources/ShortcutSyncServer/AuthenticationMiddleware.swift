import Foundation
import Hummingbird
import Logging
import ShortcutSyncStore

/// Checks the bearer token before anything reads the request's body (DESIGN §5): a request
/// without a valid token of the kind its route needs is answered `401` having cost a hash and
/// at most one indexed lookup, whatever it was about to upload.
///
/// It sits before `BodyLimitMiddleware` on every route and hands the caller to the handlers as
/// `Caller.current`. Routes that need no token (health, readiness, metrics, the spec) pass.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    let accounts: AccountStore
    /// Tokens looked up lately (`TokenCache`): a device's next request is not another query.
    let tokens: TokenCache
    /// The admin token now: a server re-reads it on SIGHUP and when a new one is announced.
    let adminToken: AdminToken
    /// Maps a failed lookup to its answer as every operation does (503 when the database is away).
    let problems: ProblemMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let token = Self.bearerToken(request.headers[.authorization])
        guard let kind = Caller.required(method: request.method.rawValue, path: request.uri.path, token: token) else {
            return try await next(request, context)
        }
        let caller: Caller, tokenHash: [UInt8]?
        do {
            guard let found = try await authenticate(token, as: kind) else {
                throw APIProblem.unauthorized
            }
            (caller, tokenHash) = found
        } catch {
            throw problems.problem(for: error, operationID: "authenticate")
        }
        return try await Caller.$current.withValue(caller) {
            try await Caller.$accountTokenHash.withValue(kind == .account ? tokenHash : nil) {
                try await next(request, context)
            }
        }
    }

    /// The caller whose token this is, if it is a valid token of `kind`. Only a token of the
    /// right shape is looked up.
    ///
    /// What a stranger can make it spend is bounded: a token of the wrong shape costs no lookup, a
    /// token the database said it does not know costs none again for a while (`TokenCache`), and
    /// at most `TokenCache.maximumLookups` lookups run at once (beyond: a wait of up to 2 s for a
    /// place, then 503 with Retry-After: a burst of devices coming back is served, a flood is not).
    /// With the caller, the token's hash for account and device tokens (the hash the lookup used).
    func authenticate(_ token: String?, as kind: Tokens.Kind) async throws -> (caller: Caller, tokenHash: [UInt8]?)? {
        guard let token, token.utf8.count <= 1024 else { return nil }
        switch kind {
        case .admin:
            // The operator's own (any text of 32 characters or more).
            return adminToken.matches(token) ? (.admin, nil) : nil
        case .account, .device:
            // Made here: anything not of their exact shape is no token of ours.
            guard Tokens.hasShape(token, of: kind) else { return nil }
            let hash = Tokens.hash(token)
            if let known = tokens.caller(tokenHash: hash) { return (known, hash) }
            if tokens.isKnownUnknown(tokenHash: hash) { return nil }
            guard await tokens.waitForLookup() else { throw APIProblem.unavailable("too many token lookups are under way; try again shortly") }
            defer { tokens.endLookup() }
            let generation = tokens.generation
            let caller = try await withStatementSpan("authenticate: look the token up", .select, kind == .account ? "accounts" : "devices") {
                kind == .account
                    ? try await accounts.account(tokenHash: hash).map(Caller.account)
                    : try await accounts.device(tokenHash: hash).map { Caller.device(device: $0.device, account: $0.account) }
            }
            if let caller {
                tokens.remember(caller, tokenHash: hash, lookedUpAt: generation)
            } else {
                tokens.rememberUnknown(tokenHash: hash)
            }
            return caller.map { ($0, hash) }
        }
    }

    /// The token of an `Authorization: Bearer …` header (the scheme in any case), else nil.
    static func bearerToken(_ header: String?) -> String? {
        guard let header, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}
