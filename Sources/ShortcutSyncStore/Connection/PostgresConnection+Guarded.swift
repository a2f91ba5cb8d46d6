import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresConnection {
    /// Runs `query`, or fails with `StoreError.connectionClosed` when the connection is closed.
    ///
    /// PostgresNIO 1.33 writes a query to its channel without a write promise: a query sent just
    /// after the server ended the session (the channel closed and its handlers were removed) is
    /// dropped, and its caller waits forever. From another thread, no check of `isClosed`
    /// beforehand can close that window; on the channel's event loop it can (`sentOnItsLoop`).
    @discardableResult
    public func guardedQuery(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await sentOnItsLoop { connection in try await connection.query(query, logger: logger) }
    }

    /// Runs a prepared statement and reads all its rows, or fails with
    /// `StoreError.connectionClosed` as soon as the connection closes (as `guardedQuery`).
    public func guardedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        // The rows are read within the statement's deadline too.
        try await sentOnItsLoop { connection in
            var all: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { all.append(row) }
            return all
        }
    }

    /// Runs `send`, which hands one statement to the connection before it first waits (as
    /// PostgresNIO's `query` and `execute` do, in the same job), on the connection's event loop,
    /// after checking there that the connection is open; fails with `StoreError.connectionClosed`
    /// when it is not.
    ///
    /// On the event loop nothing of the channel's close can come between the check and the
    /// write: a channel still active there has its handlers, so the statement reaches
    /// PostgresNIO's state machine, which fails it if the connection closes later. A statement
    /// cannot be dropped that way, and nothing races it: `untilClosed` ran each statement in a
    /// task of its own beside the close, a task and two hops between threads per statement, about
    /// 5 % of the service's CPU per 1-event push (docs/benchmarks.md, "A statement sent on its
    /// connection's event loop"). What `send` answers (a row sequence, read afterwards) fails as
    /// the connection closes, as before.
    ///
    /// A black hole (no answer, no FIN, no RST) would keep `send` waiting for the quarter of an
    /// hour TCP takes to give up, and PostgresNIO has no deadline of its own: the statement has
    /// `SessionLimits.currentDeadline`, and when it passes, or when the task is cancelled (a
    /// request ended because the database went away), the connection is closed, which fails the
    /// statement at once and takes the connection out of its pool, so that the pool opens a new
    /// one instead of lending a connection that will never answer. The timer is one scheduled
    /// task on the loop the statement already runs on, cancelled when it answers.
    func sentOnItsLoop<Result: Sendable>(_ send: (PostgresConnection) async throws -> Result) async throws -> Result {
        // A task cancelled already sends nothing, and leaves its connection as it was.
        try Task.checkCancellation()
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            guard !isClosed else { throw StoreError.connectionClosed }
            let closing = OnceFlag()
            let timer = SessionLimits.currentDeadline.map { deadline in
                eventLoop.scheduleTask(in: .nanoseconds(deadline.inNanoseconds)) { [self] in
                    if closing.setFirst() { closeSilent(after: deadline) }
                }
            }
            let outcome: Swift.Result<Result, any Error>
            do {
                outcome = .success(try await withTaskCancellationHandler {
                    try await send(self)
                } onCancel: { [self] in
                    if closing.setFirst() { _ = close() as EventLoopFuture<Void> }
                })
            } catch {
                outcome = .failure(error)
            }
            timer?.cancel()
            // A connection closed here goes back to its pool only once it has closed: the pool
            // learns of the close from `closeFuture`, and until then it could lend the closing
            // connection to another task, whose statement would fail for this one's deadline.
            if closing.isSet { try? await closeFuture.get() }
            return try outcome.get()
        }
    }

    /// Closes a connection whose statement went unanswered for `deadline`.
    private func closeSilent(after deadline: Duration) {
        guard !isClosed else { return }
        logger.warning("a statement had no answer within its deadline: its connection is closed", metadata: [
            "deadline": "\(deadline)",
        ])
        _ = close() as EventLoopFuture<Void>
    }

    /// Runs `operation` on this connection, or fails with `StoreError.connectionClosed` as soon as
    /// the connection closes, whichever comes first.
    ///
    /// The operation runs in a task of its own (it inherits task-locals and priority, and is
    /// cancelled with the caller) so that the caller can be answered even when PostgresNIO never
    /// answers the operation: that task is then abandoned, parked on a connection that is gone.
    ///
    /// The close is watched once per connection (`CloseWatch`), not once per operation: a
    /// callback on `closeFuture` cannot be removed, and one per operation would keep every
    /// finished operation's result alive for as long as the pooled connection lives.
    public func untilClosed<Result: Sendable>(
        _ operation: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard !isClosed else { throw StoreError.connectionClosed }
        let outcome = Outcome<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.wait(with: continuation)
                let watch = CloseWatch.shared.watch(self) { outcome.finish(.failure(StoreError.connectionClosed)) }
                let work = Task { [self] in
                    let result: Swift.Result<Result, any Error>
                    do { result = .success(try await operation(self)) } catch { result = .failure(error) }
                    CloseWatch.shared.unwatch(watch)
                    outcome.finish(result)
                }
                outcome.onCancel { work.cancel() }
            }
        } onCancel: {
            outcome.cancel()
        }
    }
}

/// The operations in flight on each open connection, told when it closes: one callback on each
/// connection's `closeFuture`, registered with its first operation and gone with the connection.
final class CloseWatch: Sendable {
    static let shared = CloseWatch()

    /// One operation's place in the watch.
    struct Ticket: Sendable {
        fileprivate var connection: ObjectIdentifier
        fileprivate var number: UInt64
    }

    private struct State {
        /// The waiters of each watched connection; a connection's entry goes when it closes (a
        /// later operation on it watches anew, and its callback on the completed future runs at once).
        var connections: [ObjectIdentifier: [UInt64: @Sendable () -> Void]] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Calls `onClose` when `connection` closes, unless `unwatch` comes first (at once when it has
    /// closed already: its future's callback runs as it is added).
    func watch(_ connection: PostgresConnection, onClose: @escaping @Sendable () -> Void) -> Ticket {
        let id = ObjectIdentifier(connection)
        let (ticket, isNew) = state.withLock { state -> (Ticket, Bool) in
            state.next += 1
            let ticket = Ticket(connection: id, number: state.next)
            let isNew = state.connections[id] == nil
            state.connections[id, default: [:]][ticket.number] = onClose
            return (ticket, isNew)
        }
        if isNew {
            connection.closeFuture.whenComplete { [self] _ in closedConnection(id) }
        }
        return ticket
    }

    func unwatch(_ ticket: Ticket) {
        state.withLock { state in _ = state.connections[ticket.connection]?.removeValue(forKey: ticket.number) }
    }

    private func closedConnection(_ id: ObjectIdentifier) {
        let waiters = state.withLock { state in state.connections.removeValue(forKey: id)?.values.map { $0 } ?? [] }
        for waiter in waiters { waiter() }
    }
}

/// The first of the operation's result and the connection's close, handed to the waiting caller once.
private final class Outcome<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var result: Result<Value, any Error>?
        var finished = false
        var cancelled = false
        var cancelWork: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func wait(with continuation: CheckedContinuation<Value, any Error>) {
        let ready = state.withLock { state -> Result<Value, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    func finish(_ result: Result<Value, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(with: result)
    }

    func onCancel(_ cancelWork: @escaping @Sendable () -> Void) {
        let cancelNow = state.withLock { state -> Bool in
            state.cancelWork = cancelWork
            return state.cancelled
        }
        if cancelNow { cancelWork() }
    }

    func cancel() {
        let cancelWork = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.cancelWork
        }
        cancelWork?()
    }
}

/// Runs the jobs of a task that prefers it (`withTaskExecutorPreference`) on one event loop.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Set once, by the first of a statement's deadline and its task's cancellation: that one closes
/// the connection (`PostgresConnection.sentOnItsLoop`).
private final class OnceFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Sets the flag; true for the first caller only.
    func setFirst() -> Bool { !flag.exchange(true, ordering: .acquiringAndReleasing) }

    var isSet: Bool { flag.load(ordering: .acquiring) }
}
