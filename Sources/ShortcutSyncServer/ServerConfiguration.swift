import ShortcutSyncDomain
import ShortcutSyncStore

/// What the HTTP service needs to know (`buildHTTPApplication`): its listeners, its limits, its
/// budgets. The `serve` command fills it from its arguments, within the whole process's
/// configuration (`ServeConfiguration`, which adds the database, the maintenance tasks, APNs).
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The admin token that may create accounts.
    public var adminToken: String
    /// Connections in the pool shared by all requests (pushes may hold all but four of them).
    public var maximumConnections: Int
    /// How often a live stream sends a keep-alive comment.
    public var keepAliveInterval: Duration
    /// `/readyz` reports `degraded` while more events than this wait for the maintenance tasks.
    public var degradedLag: Int64
    /// How long a request's body may take to arrive (DESIGN §5); later, `408` and the connection closes.
    public var bodyDeadline: Duration
    /// How long a connection may stay idle (nothing read, nothing being answered) before it is closed.
    public var idleTimeout: Duration
    /// The most HTTP connections open at once; further ones wait to be accepted.
    public var maximumHTTPConnections: Int
    /// The most open connections from one client address (beyond: closed as it opens).
    public var maximumConnectionsPerAddress: Int = 1_024
    /// Per person (DESIGN §5): the most shortcuts an account may hold, and signed-in devices.
    public var maximumShortcutsPerAccount = Limits.maxShortcutsPerAccount
    public var maximumDevicesPerAccount = Limits.maxDevicesPerAccount
    /// How many events each account may push, per second and at once (`429` beyond).
    public var pushBudget = PushBudgetConfiguration()
    /// Each device's budget of reads (pulls and suggestion requests): at most `deviceReadBurst` at
    /// once, then `deviceReadsPerSecond`; beyond, `429` with `Retry-After` before any query. A
    /// device pulls when poked and pages through a large view a thousand items at a time: the
    /// defaults let it, and bound one that loops.
    public var deviceReadsPerSecond: Double = 10
    public var deviceReadBurst = 60
    /// Each account's budget of device sign-ins (`POST /v1/devices`), and apart from it of
    /// sign-outs (`DELETE /v1/devices/{id}`) (issue 56): at most `deviceSignInBurst` of each at
    /// once, then `deviceSignInsPerHour`; beyond, `429` with `Retry-After` and nothing stored. A
    /// sign-out is announced to every server and leaves its device's row and its event behind, so
    /// a loop of them costs everyone: a family setting up its devices, or an app signed in again
    /// after a reinstall, stays far within the defaults.
    public var deviceSignInsPerHour: Double = 30
    public var deviceSignInBurst = 30
    /// The most pushes of one account answered at once; past them, `429` before the body is read.
    public var maximumPushesInFlightPerAccount = 4
    /// The most pushes run against the database at once (the rest of the pool stays for pulls,
    /// streams and tokens), and how long a push may wait to start before it is `503`.
    public var maximumPushesRunning = 24
    public var pushStartWait: Duration = .seconds(1)
    /// The pushes run at once: `maximumPushesRunning`, leaving four connections of the pool at
    /// least for the other requests.
    public var pushesRunning: Int { max(1, min(maximumPushesRunning, maximumConnections - 4)) }
    /// The pool's connections kept open from the start (`DatabaseURL.servicePool`); nil: as many
    /// as pushes run at once, so that a push never waits for a connection to open, and the pool
    /// arms no idle timer while the load stays within them.
    public var connectionsKeptOpen: Int?
    /// The most items one pull answers (DESIGN §5: 1,000); more follow with `more: true`. Tests
    /// make it small to page through a few items.
    public var pullPageSize: Int
    /// The apps a device may register a push token for (the APNs topics the service wakes);
    /// empty: any app's bundle id is taken (a waker sends only to the topics it was given).
    public var acceptedTopics: Set<String> = []
    /// Whether requests are traced (`serve --otel-endpoint`): each is a span (Hummingbird's
    /// `TracingMiddleware`, continuing the caller's `traceparent`), which its statements, the
    /// pokes of its change and the stream messages they make continue. Off, none of it runs.
    public var traced = false

    /// The operators' listener (`--operator-host`, `--operator-port`): `/metrics` and `/readyz`,
    /// which say how the service fares (accounts behind, parked accounts, APNs' refusals, traffic)
    /// and are not for strangers. Loopback by default; port 0 takes a free one.
    public var operatorHost = "127.0.0.1"
    public var operatorPort = 0

    public init(
        host: String = "127.0.0.1", port: Int = 8080, adminToken: String, maximumConnections: Int = 40, keepAliveInterval: Duration = .seconds(15),
        degradedLag: Int64 = 10_000, bodyDeadline: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        maximumHTTPConnections: Int = 16_384, pullPageSize: Int = ProjectionStore.defaultPullPageSize
    ) {
        self.host = host
        self.port = port
        self.adminToken = adminToken
        self.maximumConnections = maximumConnections
        self.keepAliveInterval = keepAliveInterval
        self.degradedLag = degradedLag
        self.bodyDeadline = bodyDeadline
        self.idleTimeout = idleTimeout
        self.maximumHTTPConnections = maximumHTTPConnections
        self.pullPageSize = pullPageSize
    }
}
