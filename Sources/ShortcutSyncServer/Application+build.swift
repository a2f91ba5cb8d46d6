import CoreMetrics
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncStore
import ShortcutSyncWorker

/// Builds the whole service from its configuration: the `serve` command and the tests call this.
///
/// It applies the migrations first, then wires the pool, the LISTEN hub, the worker (if this
/// process runs one) and the HTTP server into one application whose services shut down
/// gracefully together.
public func buildApplication(
    _ configuration: ServerConfiguration,
    logger: Logger,
    clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let database = configuration.database
    let client = PostgresClient(
        configuration: try database.clientConfiguration(maximumConnections: configuration.maximumConnections),
        backgroundLogger: logger)
    try await Migrator.migrate(database, logger: logger)
    let migrator = try Migrator(client: client, logger: logger)

    let hub = NotificationHub(configuration: try database.connectionConfiguration(), logger: logger,
                              keepAliveInterval: configuration.keepAliveInterval)
    let worker = configuration.runsWorker
        ? SyncWorker(client: client, connectionConfiguration: try database.connectionConfiguration(), logger: logger)
        : nil
    let api = SyncAPI(
        client: client,
        accounts: AccountStore(client: client, logger: logger),
        events: PostgresEventStore(client: client, logger: logger),
        projections: ProjectionStore(client: client, logger: logger),
        migrator: migrator,
        hub: hub,
        worker: worker,
        adminTokenHash: Tokens.hash(configuration.adminToken),
        degradedLag: configuration.degradedLag,
        logger: logger,
        now: clock)
    _ = ServerMetrics.registry

    let router = Router()
    router.middlewares.add(MetricsMiddleware())
    router.middlewares.add(BodyLimitMiddleware())
    let problems = ProblemMiddleware(logger: logger, databaseIsReachable: { hub.isDatabaseReachable })
    try api.registerHandlers(on: router, middlewares: [problems, BearerTokenMiddleware(), PushMiddleware(api: api)])
    try addOpenAPIDocumentRoute(to: router)
    // Added last, it wraps no route: only the requests none of them takes.
    router.middlewares.add(UnmatchedRouteMiddleware(routes: router.routes.map { ($0.path.description, $0.method.rawValue) }))

    var services: [any Service] = [client, hub]
    if let worker { services.append(worker) }
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "shortcut-sync"),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
}
