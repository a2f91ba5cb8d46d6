import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresConnection {
    /// Runs `query`, or fails with `StoreError.connectionClosed` as soon as the connection closes.
    ///
    /// PostgresNIO 1.33 writes a query to its channel without a write promise: a query sent just
    /// after the server ended the session (the channel closed and its handlers were removed) is
    /// dropped, and its caller waits forever. No check of `isClosed` beforehand can close that
    /// window, so every query on a connection this project owns races the connection's close.
    @discardableResult
    public func guardedQuery(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await untilClosed { connection in try await connection.query(query, logger: logger) }
    }

    /// Runs `operation` on this connection, or fails with `StoreError.connectionClosed` as soon as
    /// the connection closes, whichever comes first.
    ///
    /// The operation runs in a task of its own (it inherits task-locals and priority, and is
    /// cancelled with the caller) so that the caller can be answered even when PostgresNIO never
    /// answers the operation: that task is then abandoned, parked on a connection that is gone.
    public func untilClosed<Result: Sendable>(
        _ operation: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard !isClosed else { throw StoreError.connectionClosed }
        let outcome = Outcome<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.wait(with: continuation)
                let work = Task { [self] in
                    do { outcome.finish(.success(try await operation(self))) } catch { outcome.finish(.failure(error)) }
                }
                outcome.onCancel { work.cancel() }
                closeFuture.whenComplete { _ in outcome.finish(.failure(StoreError.connectionClosed)) }
            }
        } onCancel: {
            outcome.cancel()
        }
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
