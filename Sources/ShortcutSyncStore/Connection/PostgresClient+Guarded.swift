import Logging
import PostgresNIO

extension PostgresClient {
    /// `query` on a pooled connection, guarded as `PostgresConnection.guardedQuery` is: the
    /// statement and the reading of its rows have the statement's deadline and end when the task
    /// is cancelled, its connection then closed (`sentOnItsLoop`). PostgresNIO's own
    /// `PostgresClient.query` has neither: inside a black hole it waits as long as TCP does, and
    /// a request the database's going ended would wait with it.
    ///
    /// The rows are read before the connection goes back to the pool, so this is for the small,
    /// bounded results the service's statements have.
    @discardableResult
    public func guardedQuery(_ query: PostgresQuery, logger: Logger) async throws -> CollectedRows {
        try await withConnection { connection in
            try await connection.sentOnItsLoop { connection in
                var rows: [PostgresRow] = []
                for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
                return CollectedRows(rows: rows)
            }
        }
    }
}

/// A statement's rows, read whole: an `AsyncSequence` like PostgresNIO's `PostgresRowSequence`,
/// so that they decode the same way (`decode(_:)`, `collectAll()`).
public struct CollectedRows: AsyncSequence, Sendable {
    public typealias Element = PostgresRow

    public let rows: [PostgresRow]

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: IndexingIterator<[PostgresRow]>

        public mutating func next() async throws -> PostgresRow? { base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: rows.makeIterator()) }
}
