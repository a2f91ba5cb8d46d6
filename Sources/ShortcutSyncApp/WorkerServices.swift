import Logging
import ServiceLifecycle
import ShortcutSyncStore
import ShortcutSyncWake
import ShortcutSyncWorker

/// What a `worker` process runs (DESIGN §6, §7): `tasks` maintenance tasks and, with an APNs key,
/// a waker of sleeping devices, on a pool of their own, after migrating `database`. The services
/// are returned in the order they start: the pool first, so it stops last. `apns` is validated by
/// the caller, before the database is touched. `node`: on a Citus cluster, the node the tasks and
/// the waker run their statements on (`worker --node`); the migrations stay on `database`, the
/// coordinator. The waker listens on every node of the cluster either way. `compaction`: when the
/// tasks compact accounts' history past the retention (`--keep-history`); nil: never.
public func buildWorkerServices(database: DatabaseURL, node: DatabaseURL? = nil, tasks: Int, apns: APNsConfiguration?,
                                wake: WakeConfiguration, compaction: CompactionSchedule? = CompactionSchedule(),
                                logger: Logger) async throws -> [any Service] {
    try await Migrator.migrate(database, logger: logger)
    // Each task holds one connection while it folds; one more reads the queue's status, one the waker's.
    let client = try await (node ?? database).servicePool(maximumConnections: tasks + 2, keptOpen: tasks, logger: logger)
    var worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, tasks: tasks)
    worker.compaction = compaction
    let waker = Waker(store: PushTokenStore(client: client, logger: logger), apns: apns,
                      notifications: try await database.serviceNotifications(attachedTo: node, channels: [.projection], logger: logger),
                      configuration: wake, logger: logger)
    return [client, worker, waker]
}
