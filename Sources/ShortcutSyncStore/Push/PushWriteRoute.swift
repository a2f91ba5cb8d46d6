import Logging
import PostgresNIO
import Synchronization

/// How a write of data-modifying CTEs is sent, decided once per store by asking the database:
/// one statement on one PostgreSQL; on Citus, the push's optimistic write (`AppendFoldedStatement`)
/// as one call of a distributed function (`PushWriteFunction`), the pull's record
/// (`DeviceSyncStore.recordPull`) as a transaction of router statements.
///
/// Citus plans the one statement's data-modifying CTEs one by one through the coordinator, with
/// intermediate results between them (docs/citus.md, "Measured here": 15 commands on the worker
/// for a one-event push, and two-phase commit); each router statement is one command on the
/// account's worker. On one PostgreSQL the one statement is cheaper: the split form costs a round
/// trip per table.
public final class PushWriteRoute: Sendable {
    /// The two forms of the write.
    public enum Form: Sendable {
        case oneStatement
        case routerStatements
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
        let form: Form = try await connection.hasCitus(logger: logger) ? .routerStatements : .oneStatement
        known.withLock { $0 = form }
        return form
    }
}
