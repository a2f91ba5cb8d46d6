import Logging
import PostgresNIO

extension PostgresConnection {
    /// How a transaction begins.
    public enum TransactionMode: String, Sendable {
        case readWrite = "BEGIN"
        /// Every query sees one snapshot, and nothing is written: for pulls.
        case readOnlySnapshot = "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    }

    /// Whether an error means the session is over (the server ended it, or the connection broke):
    /// then nothing more may be sent on the connection.
    ///
    /// The server says so by the error's severity, FATAL (or PANIC): an ERROR leaves the session
    /// in its transaction, to be rolled back, whatever its SQLSTATE. A Citus coordinator answers
    /// a lost worker with an ERROR of class 08 (connection exception) on a session that goes on;
    /// read as an ended session, its transaction was not rolled back and the connection went
    /// back to the pool aborted, failing every statement of every account after it (25P02).
    /// Without a severity (never from PostgreSQL 9.6 on), classes 57 and 08 are taken as ended.
    static func endsSession(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        guard error.code == .server else { return true }
        if let severity = error.serverInfo?[.severity] {
            return severity == "FATAL" || severity == "PANIC"
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        return state.hasPrefix("57") || state.hasPrefix("08")
    }

    /// Runs `body` in a transaction and rethrows its own error, so callers can match on it.
    ///
    /// Every statement races the connection's close (see `guardedQuery`), and nothing more is
    /// sent on a session that has ended.
    public func inTransaction<Result: Sendable>(
        _ mode: TransactionMode = .readWrite,
        logger: Logger,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard !isClosed else { throw StoreError.connectionClosed }
        try await guardedQuery(PostgresQuery(unsafeSQL: mode.rawValue), logger: logger)
        do {
            let result = try await body(self)
            try await guardedQuery("COMMIT", logger: logger)
            return result
        } catch {
            if !isClosed && !Self.endsSession(error) { await rollBackOrClose(logger: logger) }
            throw error
        }
    }

    /// Rolls the transaction back, or, when that cannot be sent, closes the connection, which
    /// ends the transaction on the server: a connection must never go back to its pool inside a
    /// transaction. A cancelled task sends nothing (`sentOnItsLoop`), so a task cancelled between
    /// two statements of a transaction (a maintenance task stopped, a request whose client left)
    /// cannot roll back; before, its connection went back to the pool with the transaction open,
    /// and the next transaction on it began inside that one (PostgreSQL's "there is already a
    /// transaction in progress"; a read-only snapshot's BEGIN failed outright).
    private func rollBackOrClose(logger: Logger) async {
        if !Task.isCancelled {
            do {
                try await guardedQuery("ROLLBACK", logger: logger)
                return
            } catch {
                // Not rolled back: closed below.
            }
        }
        try? await close()
    }
}
