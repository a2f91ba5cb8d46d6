import ShortcutSyncStore

/// Everything `buildApplication` needs to know; the `serve` command fills it from its arguments.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var database: DatabaseURL
    /// The admin token that may create accounts.
    public var adminToken: String
    /// Whether this process also runs the sync worker (only one worker is active at a time).
    public var runsWorker: Bool
    /// Connections in the pool shared by all requests.
    public var maximumConnections: Int
    /// How often a live stream sends a keep-alive comment.
    public var keepAliveInterval: Duration
    /// `/readyz` reports `degraded` while more events than this wait to be folded.
    public var degradedLag: Int64

    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: DatabaseURL, adminToken: String,
        runsWorker: Bool = true, maximumConnections: Int = 40, keepAliveInterval: Duration = .seconds(15),
        degradedLag: Int64 = 10_000
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.adminToken = adminToken
        self.runsWorker = runsWorker
        self.maximumConnections = maximumConnections
        self.keepAliveInterval = keepAliveInterval
        self.degradedLag = degradedLag
    }
}
