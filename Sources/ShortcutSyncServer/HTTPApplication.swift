import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import OpenAPIHummingbird
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncStore

/// What the HTTP service is built on, made by the process that runs it (`buildApplication` of
/// `ShortcutSyncApp`): the stores on one pool, the notifications every listener of the process
/// shares, and two hooks into the rest of the process, so that this module knows nothing of the
/// maintenance tasks or of APNs.
public struct ServerParts: Sendable {
    public var accounts: AccountStore
    /// The log pushes and sign-outs are appended to, with the account's limits on shortcuts.
    public var events: any EventStore
    public var projections: ProjectionStore
    public var pushTokens: PushTokenStore
    public var deviceSync: DeviceSyncStore
    public var migrator: Migrator
    /// The process's one LISTEN connection: the streams' pokes and tokens revoked elsewhere.
    public var notifications: SharedNotifications
    /// What `/readyz` says of the background wakes.
    public var wakes: @Sendable () -> WakeReadiness
    /// Called when a push could not fold its account (it is behind): the maintenance tasks of
    /// this process, if it runs them, look at once rather than at their next poll.
    public var accountBehind: @Sendable () -> Void
    /// The admin token, when the process replaces it while it runs (`AdminToken`); nil: the
    /// configuration's, for as long as the service runs.
    public var adminToken: AdminToken?

    public init(accounts: AccountStore, events: any EventStore, projections: ProjectionStore, pushTokens: PushTokenStore,
                deviceSync: DeviceSyncStore, migrator: Migrator, notifications: SharedNotifications,
                wakes: @escaping @Sendable () -> WakeReadiness, accountBehind: @escaping @Sendable () -> Void) {
        self.accounts = accounts
        self.events = events
        self.projections = projections
        self.pushTokens = pushTokens
        self.deviceSync = deviceSync
        self.migrator = migrator
        self.notifications = notifications
        self.wakes = wakes
        self.accountBehind = accountBehind
    }
}

/// Builds the HTTP service on `parts`: the public listener (the API, token before body, budgets,
/// limits) and the operators' (`/metrics`, `/readyz`), with the streams' hub and the change
/// announcer, and `services` (the pool and whatever else the process runs) beside them, so that
/// all shut down gracefully together. `beforeServerStarts` runs on the running services before
/// the listeners open (the migrations).
public func buildHTTPApplication(
    _ configuration: ServerConfiguration,
    parts: ServerParts,
    services: [any Service],
    logger: Logger,
    clock: @escaping @Sendable () -> Int64,
    monotonic: @escaping @Sendable () -> ContinuousClock.Instant,
    beforeServerStarts: @escaping @Sendable () async throws -> Void,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void,
    onOperatorsListenerRunning: @escaping @Sendable (any Channel) async -> Void
) throws -> some ApplicationProtocol {
    ServerMetrics.register()
    let accounts = parts.accounts
    let hub = NotificationHub(notifications: parts.notifications, logger: logger,
                              keepAliveInterval: configuration.keepAliveInterval,
                              signedIn: { try await accounts.signedIn(among: $0) },
                              tokensStillValid: { try await accounts.tokensStillValid(among: $0) },
                              poolServes: { everyConnection in
                                  if everyConnection {
                                      try await accounts.pingEveryConnection(configuration.maximumConnections)
                                  } else {
                                      try await accounts.ping()
                                  }
                              },
                              watchesNodes: parts.projections.router != nil)
    let announcer = ChangeAnnouncer(projections: parts.projections, hub: hub, logger: logger)
    let api = SyncAPI(
        accounts: accounts,
        events: parts.events,
        projections: parts.projections,
        migrator: parts.migrator,
        hub: hub,
        announcer: announcer,
        pushTokens: parts.pushTokens,
        deviceSync: parts.deviceSync,
        wakes: parts.wakes,
        accountBehind: parts.accountBehind,
        degradedLag: configuration.degradedLag,
        maximumDevices: configuration.maximumDevicesPerAccount,
        acceptedTopics: configuration.acceptedTopics,
        reads: Budget(perSecond: configuration.deviceReadsPerSecond, burst: configuration.deviceReadBurst, now: monotonic),
        signIns: Budget(perSecond: configuration.deviceSignInsPerHour / 3_600, burst: configuration.deviceSignInBurst, now: monotonic),
        signOuts: Budget(perSecond: configuration.deviceSignInsPerHour / 3_600, burst: configuration.deviceSignInBurst, now: monotonic),
        pushesInFlight: PushesInFlight(limit: configuration.maximumPushesInFlightPerAccount),
        logger: logger,
        now: clock)

    let router = Router(context: SyncRequestContext.self)
    // OpenTelemetry's HTTP conventions; a pull's cursor says what the device has, so it is not recorded.
    // It is shown only `traceparent` and `tracestate`: no header that holds a secret reaches a log or a span.
    if configuration.traced { router.middlewares.add(TraceHeadersMiddleware(redactingQueryParameters: ["cursor"])) }
    // Hummingbird's metrics, counted without taking an answer off its one-write path.
    router.middlewares.add(RequestMetricsMiddleware())
    // A request refused before its body was read is answered, then its connection closed.
    router.middlewares.add(EarlyRefusalMiddleware())
    // A path no route has is answered 404 before a token or a byte of its body is read.
    let routes = RouteTable()
    router.middlewares.add(UnmatchedRouteMiddleware(table: routes))
    let problems = ProblemMiddleware(logger: logger)
    // The token before the body: a caller without one never gets a byte of its upload read.
    router.middlewares.add(AuthenticationMiddleware(accounts: accounts, tokens: hub.tokens, adminToken: parts.adminToken ?? AdminToken(configuration.adminToken), problems: problems))
    // A push over its account's limits is refused before its body is read.
    let budget = Budget(configuration.pushBudget, now: monotonic)
    router.middlewares.add(PushAdmissionMiddleware(budget: budget, inFlight: api.pushesInFlight))
    router.middlewares.add(BodyLimitMiddleware(deadline: configuration.bodyDeadline))
    let gate = PushGate(running: configuration.pushesRunning, wait: configuration.pushStartWait)
    let push = PushRoute(api: api, budget: budget, gate: gate, turns: AccountTurns(), problems: problems)
    router.post(.init(PushRoute.path)) { request, context in try await push.respond(to: request, context: context) }
    try api.registerHandlers(on: GeneratedRoutes(router: router) { method, path in
        !(method == .post && path == PushRoute.path) && !GeneratedRoutes<SyncRequestContext>.isOperators(method, path)
    }, middlewares: [problems])
    try addOpenAPIDocumentRoute(to: router)
    routes.set(router.routes.map { ($0.path.description, $0.method.rawValue) })

    let perAddress = ConnectionsPerAddress(limit: configuration.maximumConnectionsPerAddress, logger: logger)
    // The operators' listener: /metrics and /readyz, loopback by default, apart from the public one.
    let operatorRouter = Router(context: BasicRequestContext.self)
    try api.registerHandlers(on: GeneratedRoutes(router: operatorRouter) { method, path in
        GeneratedRoutes<BasicRequestContext>.isOperators(method, path)
    }, middlewares: [problems])
    let operators = Application(
        router: operatorRouter,
        configuration: .init(address: .hostname(configuration.operatorHost, port: configuration.operatorPort), serverName: "shortcut-sync"),
        onServerRunning: onOperatorsListenerRunning,
        logger: logger)
    var app = Application(
        // Every wait on the database ends within moments of its going (DESIGN §8).
        responder: DatabaseReachResponder(inner: router.buildResponder(), reach: hub.reach),
        // A connection idle for the timeout is closed (streams send a comment every 15 s, and a
        // response being written is never idle); no more than the cap are open at once, and one
        // client address has at most its own share of them.
        server: .http1(configuration: .init(
            additionalChannelHandlers: [perAddress.handler(), BodyDeadlineHandler(deadline: .init(configuration.bodyDeadline))],
            idleTimeout: .init(configuration.idleTimeout))),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "shortcut-sync",
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumHTTPConnections, logger: logger)),
        services: services + [hub, announcer, operators],
        onServerRunning: onServerRunning,
        logger: logger)
    app.beforeServerStarts(perform: beforeServerStarts)
    return app
}
