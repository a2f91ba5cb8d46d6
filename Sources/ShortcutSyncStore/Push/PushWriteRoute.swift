import Logging
import PostgresNIO
import Synchronization

/// How a write of data-modifying CTEs is sent, decided once per store by asking the database:
/// one statement on one PostgreSQL; on Citus, one call of a distributed function that Citus sends
/// whole to the account's worker (`DistributedFunctions`): the push's optimistic write
/// (`AppendFoldedStatement`, `PushWriteFunction`) and the pull's record (`DeviceSyncStore.recordPull`,
/// `RecordPullFunction`).
///
/// Citus plans the one statement's data-modifying CTEs one by one through the coordinator, with
/// intermediate results between them (docs/citus.md, "Measured here": 15 commands on the worker
/// for a one-event push, and two-phase commit); a function distributed by its account argument is
/// one command on the account's worker, whose statements run on the shards there. On one
/// PostgreSQL the one statement is cheaper: a function's statements are planned apart.
public final class PushWriteRoute: Sendable {
    /// The two forms of the write.
    public enum Form: Sendable {
        case oneStatement
        case distributedFunction
    }

    private let known: Mutex<Form?>

    /// `form`: the form to use; nil: the database is asked at the first push that writes.
    public init(_ form: Form? = nil) {
        known = Mutex(form)
    }

    /// The form for this store's database, asked on `connection` the first time (a Citus
    /// coordinator has the citus extension).
    func form(on connection: PostgresConnection, logger: Logger) async throws -> Form {
        if let form = known.withLock({ $0 }) { return form }
        let form: Form = try await connection.hasCitus(logger: logger) ? .distributedFunction : .oneStatement
        known.withLock { $0 = form }
        return form
    }
}
