/// The time limits of every session a process opens to PostgreSQL, the server's and its own.
///
/// The server's three are startup parameters of each session (no statement is spent on them):
/// a statement that runs too long, a lock waited for too long, and a transaction left open with
/// nothing running in it each end on the server, whatever became of the client. The last is the
/// one a black hole needs: a push cut off by a silent network mid-transaction holds its
/// account's head row locked until the server gives up on the session; with it, the server gives
/// up within seconds instead of the quarter of an hour TCP takes, and the account's pushes go on.
///
/// The client's own, `statementDeadline`, is a little longer than the server's statement
/// timeout: a statement the server would have ended by then with an error has no answer because
/// nothing reaches the server or comes back from it, and its connection is closed (not only its
/// task cancelled), so that the pool opens a new one (`PostgresConnection.sentOnItsLoop`).
public struct SessionLimits: Sendable, Hashable {
    /// `statement_timeout`; nil for none.
    public var statementTimeout: Duration?
    /// `lock_timeout`; nil for none.
    public var lockTimeout: Duration?
    /// `idle_in_transaction_session_timeout`; nil for none.
    public var idleInTransactionTimeout: Duration?

    public init(statementTimeout: Duration?, lockTimeout: Duration?, idleInTransactionTimeout: Duration?) {
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
        self.idleInTransactionTimeout = idleInTransactionTimeout
    }

    /// `serve` and `worker` (docs/operating.md, "Connections to the database"):
    /// - statements end after 30 s: the longest of the service's own are a maintenance step's
    ///   read of one account's events (a second or two for 100,000) and a compaction's; a push or
    ///   a pull takes milliseconds;
    /// - a lock is waited for 5 s at most: pushes of one account wait for each other's head lock
    ///   for milliseconds; past 5 s something holds it that will not let go soon, and the push is
    ///   answered 503 (`55P03`) for its device to retry, instead of holding a connection;
    /// - a transaction idle for 10 s is ended: the service runs its transactions' statements
    ///   back to back, the longest pause between two being a compaction's fold of one account in
    ///   memory; a session whose client went silent frees its locks within 10 s.
    public static let service = SessionLimits(statementTimeout: .seconds(30), lockTimeout: .seconds(5),
                                              idleInTransactionTimeout: .seconds(10))

    /// `admin` and `migrate`: an operator's command runs as long as its work takes (a rebuild's
    /// statements last as long as its largest account's history; Ctrl-C ends it) and waits a
    /// minute at most for a lock a push holds; a transaction idle for 5 minutes is ended.
    public static let command = SessionLimits(statementTimeout: nil, lockTimeout: .seconds(60),
                                              idleInTransactionTimeout: .seconds(300))

    /// How much longer than `statementTimeout` the client waits for an answer before it takes the
    /// connection for silent: the server's own error comes first when the server can be reached.
    public static let deadlineMargin: Duration = .seconds(5)

    /// How long a statement may go unanswered before its connection is closed; nil when
    /// statements have no time limit.
    public var statementDeadline: Duration? {
        statementTimeout.map { $0 + Self.deadlineMargin }
    }

    /// The three as startup parameters (`0` is PostgreSQL's "none").
    var startupParameters: [(String, String)] {
        func value(_ limit: Duration?) -> String { limit.map { "\($0.inMilliseconds)" } ?? "0" }
        return [
            ("statement_timeout", value(statementTimeout)),
            ("lock_timeout", value(lockTimeout)),
            ("idle_in_transaction_session_timeout", value(idleInTransactionTimeout)),
        ]
    }

    /// The deadline of the statements the current task sends (`PostgresConnection.sentOnItsLoop`):
    /// the service's unless a caller says otherwise (`withStatementDeadline`).
    @TaskLocal static var currentDeadline: Duration? = SessionLimits.service.statementDeadline

    /// Runs `body` with `deadline` on every statement it sends: nil for none (an operator's
    /// command, a migration), shorter for a probe that must answer quickly.
    @discardableResult
    public static func withStatementDeadline<Result>(
        _ deadline: Duration?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $currentDeadline.withValue(deadline, operation: body, isolation: isolation)
    }
}
