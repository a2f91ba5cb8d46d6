import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake
import ShortcutSyncWorker

/// Builds a whole `serve` process from its configuration: the `serve` command, the demo and the
/// tests call this.
///
/// It wires the pool, the one LISTEN connection, the waker of sleeping devices and the
/// maintenance tasks (if this process runs them) to the HTTP service, into one application whose
/// services shut down gracefully together. The migrations run inside that lifecycle, on the
/// running pool, before the listeners open; the maintenance tasks and the waker start once they
/// are applied.
public func buildApplication(
    _ configuration: ServeConfiguration,
    logger: Logger,
    clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
    monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    onOperatorsListenerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let database = configuration.database
    // Before the waker and the maintenance tasks make their metrics: one made earlier counts into nothing.
    ServerMetrics.register()
    // The key is read (and a bad one refused) before anything starts.
    let apns = configuration.runsWaker ? configuration.apns : nil
    try await apns?.validate()
    let keptOpen = configuration.server.connectionsKeptOpen ?? configuration.server.pushesRunning
    let client = try await database.servicePool(maximumConnections: configuration.server.maximumConnections,
                                                keptOpen: configuration.node == nil ? keptOpen : 1, logger: logger)
    // The requests' pool: on the node this server is attached to (a Citus worker), else the same.
    var requests = client
    if let node = configuration.node {
        requests = try await node.servicePool(maximumConnections: configuration.server.maximumConnections, keptOpen: keptOpen, logger: logger)
    }
    let migrator = try Migrator(client: client, logger: logger)
    // One LISTEN connection (one a node, on Citus) for the streams' hub and the waker.
    let listened = try await database.serviceNotifications(attachedTo: configuration.node, logger: logger)
    let notifications = SharedNotifications(listened)
    // Each account's pushes and pulls on the worker of its shards, asked of the requests' node;
    // a worker whose LISTEN is lost is away for the router until it is back.
    let router = configuration.routesByAccount
        ? try await (configuration.node ?? database).accountRouter(lookup: requests, maximumConnections: configuration.server.maximumConnections,
                                                                   keptOpen: keptOpen, logger: logger)
        : nil
    if let router { (listened as? ClusterNotifications)?.observeNodes { router.node($0, listening: $1) } }
    let worker = configuration.runsWorker ? {
        var worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, tasks: configuration.workerTasks)
        worker.compaction = configuration.compaction
        return worker
    }() : nil
    let waker = Waker(store: PushTokenStore(client: client, logger: logger), apns: apns, notifications: notifications,
                      configuration: configuration.wake, logger: logger)
    let wakeStatus = waker.status
    var parts = ServerParts(
        accounts: AccountStore(client: requests, logger: logger),
        events: {
            var events = PostgresEventStore(client: requests, logger: logger)
            events.maximumShortcuts = configuration.server.maximumShortcutsPerAccount
            events.readCache = configuration.pushRowsKept > 0 ? FoldReadCache(capacity: configuration.pushRowsKept) : nil
            events.router = router
            return events
        }(),
        projections: {
            var projections = ProjectionStore(client: requests, logger: logger, pullPageSize: configuration.server.pullPageSize, router: router)
            projections.suggestionCache = configuration.suggestionSumsKept > 0 ? SuggestionCandidateCache(capacity: configuration.suggestionSumsKept) : nil
            return projections
        }(),
        pushTokens: PushTokenStore(client: requests, logger: logger),
        deviceSync: DeviceSyncStore(client: requests, logger: logger, router: router),
        migrator: migrator,
        notifications: notifications,
        wakes: {
            let state = wakeStatus.current
            guard case .keyRefused(let reason) = state else { return WakeReadiness(word: state.word) }
            return WakeReadiness(word: state.word, keyRefusal: reason)
        },
        accountBehind: { worker?.nudge() })
    // Replaced while the service runs: on SIGHUP and when a rotation is announced.
    let adminToken = AdminToken(configuration.server.adminToken)
    parts.adminToken = adminToken

    // Each waits on a stream of its own: an AsyncStream hands each element to one reader only.
    let (workerMigrated, workerMigrationsApplied) = AsyncStream<Void>.makeStream()
    let (wakerMigrated, wakerMigrationsApplied) = AsyncStream<Void>.makeStream()
    var services: [any Service] = [client]
    if configuration.node != nil { services.append(requests) }
    for (_, pool) in (router?.pools ?? [:]).sorted(by: { $0.key < $1.key }) { services.append(pool) }
    if let worker { services.append(AfterMigrations(service: worker, migrated: workerMigrated)) }
    services.append(AfterMigrations(service: waker, migrated: wakerMigrated))
    services.append(AdminTokenReloader(file: configuration.adminTokenFile.map(AdminTokenFile.init), adminToken: adminToken,
                                       notifications: notifications, onHangUp: configuration.readsAdminTokenOnHangUp, logger: logger))
    var server = configuration.server
    server.acceptedTopics = configuration.acceptedTopics
    return try buildHTTPApplication(
        server, parts: parts, services: services, logger: logger, clock: clock, monotonic: monotonic,
        beforeServerStarts: {
            try await migrator.migrate()
            for applied in [workerMigrationsApplied, wakerMigrationsApplied] {
                applied.yield()
                applied.finish()
            }
        },
        onServerRunning: onServerRunning,
        onOperatorsListenerRunning: onOperatorsListenerRunning)
}
