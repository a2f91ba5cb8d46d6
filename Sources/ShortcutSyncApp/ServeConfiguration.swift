import Foundation
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake

/// Everything a `serve` process needs to know (`buildApplication`): its HTTP service's
/// configuration, its database, and what else it runs beside the HTTP service — maintenance
/// tasks and a waker of sleeping devices. The `serve` command fills it from its arguments.
public struct ServeConfiguration: Sendable {
    /// The listeners, limits and budgets of the HTTP service.
    public var server: ServerConfiguration
    /// The database; on a Citus cluster, the coordinator's URL of it.
    public var database: DatabaseURL
    /// On a Citus cluster, the node (a worker, as a URL of the database there) that this server's
    /// requests run on (`--node-url`): pushes, pulls, sign-ins and sign-outs, and their `NOTIFY`s,
    /// so that the coordinator runs none of them. The migrations, the maintenance tasks and the
    /// waker's sweeps stay on `database`. nil: every statement on `database`, as on one PostgreSQL.
    /// Either way the server listens on every node of the cluster (`ClusterNotifications`).
    public var node: DatabaseURL?
    /// On a Citus cluster, whether each account's pushes and pulls go to the worker that holds its
    /// shards (`--route-by-account`, `AccountRouter`), over a pool on every such worker, instead
    /// of to `node` (or `database`), which forwards those of accounts held elsewhere. The other
    /// requests stay on `node` or `database`.
    public var routesByAccount = false
    /// Whether this process also runs maintenance tasks (any number of processes may).
    public var runsWorker: Bool
    /// How many maintenance tasks it runs side by side.
    public var workerTasks = 1
    /// When its maintenance tasks compact accounts' history past the retention by themselves
    /// (`--keep-history`, 90 days unless told); nil: never, history is kept forever.
    public var compaction: CompactionSchedule? = CompactionSchedule()
    /// Accounts whose last pushes' rows the service keeps for their next push (`FoldReadCache`); 0: none.
    public var pushRowsKept = FoldReadCache.defaultCapacity
    /// The sums of devices' last suggestions requests the service keeps for their next, counted
    /// in shortcuts, devices and sums (`SuggestionCandidateCache`); 0: every request reads them.
    public var suggestionSumsKept = SuggestionCandidateCache.defaultCapacity
    /// APNs, for background wakes (DESIGN §6, §7); nil: no key, no wake is sent.
    public var apns: APNsConfiguration?
    /// The topics a push token may be registered for when this server has no key of its own (a
    /// `worker` beside it sends the wakes): `--apns-topic`. With a key, its `topics` are the ones.
    /// None: any app's bundle id is taken (a waker sends only to the topics it was given).
    public var apnsTopics: Set<String> = []
    /// When devices are woken: the delay after a change, the interval between two wakes.
    public var wake = WakeConfiguration()
    /// Whether this process runs a waker (every server may; tests of two servers turn it off in one).
    public var runsWaker = true
    /// The file the admin token (`server.adminToken`) was read from, read again when
    /// `admin rotate-admin-token` announces a new token (`AdminTokenReloader`); nil: the token
    /// was given in the environment and stays as it is.
    public var adminTokenFile: URL?
    /// Whether `SIGHUP` makes the process read `adminTokenFile` again (`serve` does; a test
    /// process that runs servers of its own does not trap its signals).
    public var readsAdminTokenOnHangUp = false

    public init(server: ServerConfiguration, database: DatabaseURL, runsWorker: Bool = true) {
        self.server = server
        self.database = database
        self.runsWorker = runsWorker
    }

    /// The topics a device may register a push token for; empty: any.
    var acceptedTopics: Set<String> { apns?.topics ?? apnsTopics }
}
