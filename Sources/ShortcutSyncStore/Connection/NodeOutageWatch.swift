import Synchronization

/// A request's watch over the nodes its statements were routed to (`AccountRouter`): told when
/// one of them is lost, so that the request ends at once (`503` with `Retry-After`) instead of
/// waiting for a connection to a node that is gone. PostgresNIO's pool keeps a request waiting
/// while it tries to connect again, up to a minute; on one PostgreSQL `DatabaseReach` ends such
/// requests when the database goes, and this does the same for one node of a Citus cluster.
///
/// Whoever runs the request (`DatabaseReach.whileReachable`) makes one, sets it as `current`
/// around the request and calls `end()` once it is over; the router registers it with each node
/// it routes a statement of the request to.
public final class NodeOutageWatch: Sendable {
    @TaskLocal public static var current: NodeOutageWatch?

    private let onOutage: @Sendable () -> Void
    /// What `end()` undoes: the router's registrations of this watch.
    private let registrations = Mutex<[@Sendable () -> Void]>([])

    public init(onOutage: @escaping @Sendable () -> Void) {
        self.onOutage = onOutage
    }

    /// A node the request uses was lost.
    func outage() {
        onOutage()
    }

    /// Keeps `undo`, to be called at `end()`.
    func registered(undo: @escaping @Sendable () -> Void) {
        registrations.withLock { $0.append(undo) }
    }

    /// The request is over: no node's loss concerns it any more.
    public func end() {
        for undo in registrations.withLock({ registrations in defer { registrations.removeAll() }; return registrations }) { undo() }
    }
}
