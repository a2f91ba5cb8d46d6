import ShortcutSyncStore
import Synchronization

/// Whether the database can serve requests now, and the requests that are waiting on it.
///
/// A request that needs the database runs through `whileReachable`: refused at once while the
/// database is known to be away, and answered within moments of its going when it was already
/// waiting (for a pooled connection, or on a connection the server ended). PostgresNIO's pool
/// waits for a connection for as long as it takes, retrying with a backoff that grows to a
/// minute; without this, a request that arrived as the database went would wait for it to
/// come back (DESIGN §8: any request while the database is unreachable, however long, is
/// answered 503 with Retry-After within 2 s).
///
/// The `NotificationHub` tells it: unreachable when an attempt to connect fails, reachable
/// again once a connection is made *and* the pool has served a query (after an outage the pool
/// may still be in its backoff, and requests let in then would wait for it).
public final class DatabaseReach: Sendable {
    private struct State {
        var isReachable = true
        /// Told once when the database becomes unreachable, keyed by their ticket.
        var waiters: [Int: @Sendable () -> Void] = [:]
        var nextTicket = 0
    }

    private let state = Mutex(State())
    /// The same as `state.isReachable`, for the check every request makes, without the lock.
    private let reachable = Atomic<Bool>(true)

    /// Whether each request gets a `NodeOutageWatch`: only where statements are routed by account
    /// (`AccountRouter`), the one thing that tells a watch; elsewhere a request makes none.
    private let watchesNodes: Bool

    public init(watchesNodes: Bool = false) {
        self.watchesNodes = watchesNodes
    }

    public var isReachable: Bool { reachable.load(ordering: .relaxed) }

    /// An attempt to connect failed: refuse requests from now on and end those waiting.
    public func becameUnreachable() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            guard state.isReachable else { return [] }
            state.isReachable = false
            reachable.store(false, ordering: .relaxed)
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter() }
    }

    /// The database serves queries again.
    public func becameReachable() {
        state.withLock { state in
            state.isReachable = true
            reachable.store(true, ordering: .relaxed)
        }
    }

    /// Runs `operation`; when the database becomes unreachable before it ends, cancels it and
    /// throws `DatabaseAway` once it has ended — unless it succeeded all the same (a push that
    /// committed is acknowledged). Throws `DatabaseAway` at once, without running it, while the
    /// database is known to be unreachable.
    ///
    /// The operation is cancelled, never abandoned: the pool's leases end at once when cancelled,
    /// and a statement on a connection the server ended fails as the connection closes
    /// (`PostgresConnection.guardedExecute`, `untilClosed`), so the wait after cancelling is short, and nothing is
    /// left running on a connection that goes back to the pool.
    public func whileReachable<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        guard isReachable else { throw DatabaseAway() }
        return try await withThrowingTaskGroup(of: Result<Value, any Error>.self) { group in
            let race = FirstOutcome<Value>()
            // On a Citus cluster routed by account, the loss of a worker the request's statements
            // went to ends it too (`AccountRouter`), as the database's going does.
            let watch = watchesNodes ? NodeOutageWatch { race.settle(.outage) } : nil
            group.addTask {
                let result: Result<Value, any Error>
                do {
                    if let watch {
                        result = .success(try await NodeOutageWatch.$current.withValue(watch) { try await operation() })
                    } else {
                        result = .success(try await operation())
                    }
                } catch {
                    result = .failure(error)
                }
                race.settle(.finished(result))
                return result
            }
            let ticket = onUnreachable { race.settle(.outage) }
            defer {
                if let ticket { cancel(ticket) }
                watch?.end()
            }
            switch await race.outcome() {
            case .finished(let result):
                return try result.get()
            case .outage:
                group.cancelAll()
                guard case .success(let value)? = try await group.next() else { throw DatabaseAway() }
                return value
            }
        }
    }

    /// Calls `waiter` once when the database becomes unreachable; at once, returning nil, when it is already.
    private func onUnreachable(_ waiter: @escaping @Sendable () -> Void) -> Int? {
        let ticket = state.withLock { state -> Int? in
            guard state.isReachable else { return nil }
            state.nextTicket += 1
            state.waiters[state.nextTicket] = waiter
            return state.nextTicket
        }
        if ticket == nil { waiter() }
        return ticket
    }

    private func cancel(_ ticket: Int) {
        _ = state.withLock { state in state.waiters.removeValue(forKey: ticket) }
    }
}

/// The first of an operation's end and the database's going, handed to the one who waits.
private final class FirstOutcome<Value: Sendable>: Sendable {
    enum Outcome: Sendable {
        case finished(Result<Value, any Error>)
        case outage
    }

    private struct State {
        var outcome: Outcome?
        var waiting: CheckedContinuation<Outcome, Never>?
    }

    private let state = Mutex(State())

    /// The first outcome counts; later ones are ignored.
    func settle(_ outcome: Outcome) {
        let waiting = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: outcome)
    }

    func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let settled = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiting = continuation
                return nil
            }
            if let settled { continuation.resume(returning: settled) }
        }
    }
}
