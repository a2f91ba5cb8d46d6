import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import OpenAPIHummingbird
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncStore
import ShortcutSyncWake
import ShortcutSyncWorker

/// Builds the whole service from its configuration: the `serve` command and the tests call this.
///
/// It wires the pool, the LISTEN hub, the change announcer, the waker of sleeping devices, the maintenance tasks (if this process runs them) and the HTTP server
/// into one application whose services shut down gracefully together. The migrations run inside
/// that lifecycle, on the running pool, before the HTTP server starts (`beforeServerStarts`); the
/// maintenance tasks start once they are applied.
public func buildApplication(
    _ configuration: ServerConfiguration,
    logger: Logger,
    clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
    monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    onOperatorsListenerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let database = configuration.database
    // The key is read (and a bad one refused) before anything starts.
    let apns = configuration.runsWaker ? configuration.apns : nil
    try await apns?.validate()
    let client = PostgresClient(
        configuration: try await database.serviceClientConfiguration(maximumConnections: configuration.maximumConnections, logger: logger),
        backgroundLogger: logger)
    let migrator = try Migrator(client: client, logger: logger)

    let accounts = AccountStore(client: client, logger: logger)
    // One LISTEN connection for the hub and the waker.
    let notifications = SharedNotifications(NotificationSource(.dedicated(try database.connectionConfiguration()), logger: logger))
    let hub = NotificationHub(notifications: notifications, logger: logger,
                              keepAliveInterval: configuration.keepAliveInterval,
                              signedIn: { try await accounts.signedIn(among: $0) },
                              poolServes: { try await accounts.ping() })
    let announcer = ChangeAnnouncer(projections: ProjectionStore(client: client, logger: logger), hub: hub, logger: logger)
    let worker = configuration.runsWorker
        ? SyncWorker(client: client, logger: logger, tasks: configuration.workerTasks)
        : nil
    let pushTokens = PushTokenStore(client: client, logger: logger)
    let waker = Waker(store: pushTokens, apns: apns, notifications: notifications,
                      configuration: configuration.wake, logger: logger)
    let api = SyncAPI(
        accounts: accounts,
        events: {
            var events = PostgresEventStore(client: client, logger: logger)
            events.maximumShortcuts = configuration.maximumShortcutsPerAccount
            return events
        }(),
        projections: ProjectionStore(client: client, logger: logger, pullPageSize: configuration.pullPageSize),
        migrator: migrator,
        hub: hub,
        announcer: announcer,
        pushTokens: pushTokens,
        wakeStatus: waker.status,
        worker: worker,
        degradedLag: configuration.degradedLag,
        maximumDevices: configuration.maximumDevicesPerAccount,
        acceptedTopics: configuration.acceptedTopics,
        reads: Budget(perSecond: configuration.deviceReadsPerSecond, burst: configuration.deviceReadBurst, now: monotonic),
        pushesInFlight: PushesInFlight(limit: configuration.maximumPushesInFlightPerAccount),
        logger: logger,
        now: clock)
    _ = ServerMetrics.registry

    let router = Router(context: SyncRequestContext.self)
    router.middlewares.add(MetricsMiddleware())
    // A request refused before its body was read is answered, then its connection closed.
    router.middlewares.add(EarlyRefusalMiddleware())
    // A path no route has is answered 404 before a token or a byte of its body is read.
    let routes = RouteTable()
    router.middlewares.add(UnmatchedRouteMiddleware(table: routes))
    let problems = ProblemMiddleware(logger: logger)
    // The token before the body: a caller without one never gets a byte of its upload read.
    router.middlewares.add(AuthenticationMiddleware(accounts: accounts, tokens: hub.tokens, adminTokenHash: Tokens.hash(configuration.adminToken), problems: problems))
    // A push over its account's limits is refused before its body is read.
    let budget = Budget(configuration.pushBudget, now: monotonic)
    router.middlewares.add(PushAdmissionMiddleware(budget: budget, inFlight: api.pushesInFlight))
    router.middlewares.add(BodyLimitMiddleware(deadline: configuration.bodyDeadline))
    // Never the whole pool: four connections at least stay for the other requests.
    let gate = PushGate(running: max(1, min(configuration.maximumPushesRunning, configuration.maximumConnections - 4)), wait: configuration.pushStartWait)
    let push = PushRoute(api: api, budget: budget, gate: gate, problems: problems)
    router.post(.init(PushRoute.path)) { request, context in try await push.respond(to: request, context: context) }
    try api.registerHandlers(on: GeneratedRoutes(router: router) { method, path in
        !(method == .post && path == PushRoute.path) && !GeneratedRoutes<SyncRequestContext>.isOperators(method, path)
    }, middlewares: [problems])
    try addOpenAPIDocumentRoute(to: router)
    routes.set(router.routes.map { ($0.path.description, $0.method.rawValue) })

    let perAddress = ConnectionsPerAddress(limit: configuration.maximumConnectionsPerAddress, logger: logger)
    let (migrated, migrationsApplied) = AsyncStream<Void>.makeStream()
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
    var services: [any Service] = [client, hub, announcer, operators]
    if let worker { services.append(AfterMigrations(service: worker, migrated: migrated)) }
    // Each waits on a stream of its own: an AsyncStream hands each element to one reader only.
    let (wakerMigrated, wakerMigrationsApplied) = AsyncStream<Void>.makeStream()
    services.append(AfterMigrations(service: waker, migrated: wakerMigrated))
    var app = Application(
        // Every wait on the database ends within moments of its going (DESIGN §8).
        responder: DatabaseReachResponder(inner: router.buildResponder(), reach: hub.reach),
        // A connection idle for the timeout is closed (streams send a comment every 15 s, and a
        // response being written is never idle); no more than the cap are open at once.
        // and one client address has at most its own share of them.
        server: .http1(configuration: .init(
            additionalChannelHandlers: [perAddress.handler()], idleTimeout: .init(configuration.idleTimeout))),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "shortcut-sync",
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumHTTPConnections, logger: logger)),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
    app.beforeServerStarts {
        try await migrator.migrate()
        migrationsApplied.yield()
        migrationsApplied.finish()
        wakerMigrationsApplied.yield()
        wakerMigrationsApplied.finish()
    }
    return app
}
