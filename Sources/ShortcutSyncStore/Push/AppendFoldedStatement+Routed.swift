import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension AppendFoldedStatement {
    /// The same write as a transaction of router statements, for a Citus coordinator
    /// (`PushWriteRoute`): each one command on the account's worker (docs/citus.md, "Measured
    /// here"), where Citus plans the one statement's CTEs one by one through the coordinator.
    ///
    /// First the head's check and move (`HeadMoveStatement`, the one statement's `moved` arm): no
    /// row, and the transaction is rolled back with nothing written, as the one statement writes
    /// nothing when its check fails. It holds the head's row lock to the commit, so a push of the
    /// same account waits and then finds the head moved. Then the batch, as one multi-row `INSERT
    /// … VALUES` (an `INSERT … SELECT` into `events` goes through the coordinator, which draws its
    /// `position` from a sequence), then each fold arm the result writes (`FoldArm.routedSQL`),
    /// bound with the one statement's `$1`…`$50`, then COMMIT: one command on one worker, no
    /// two-phase commit. A unique violation (a retry, a reused id) fails the transaction as it
    /// fails the one statement, and the caller tells which. How many events it appended and the
    /// head's new mark; nil when the head's check failed.
    func runAsRouterStatements(on connection: PostgresConnection, logger: Logger) async throws -> (appended: Int, mark: String)? {
        let bodies = batch.map(\.body.fieldsJSON)
        var values = PostgresBindings(capacity: 50)
        values.append(account)
        try FoldWriteStatement<LiveProjectionTables>.appendValues(
            of: result, unstored: UnstoredEvents(afterVersion: expectedVersion, events: batch, bodies: bodies), to: &values)
        let arms = FoldArm.allCases.filter(FoldArm.writing(result).contains)
        let move = HeadMoveStatement(account: account, expectedVersion: expectedVersion,
                                     newVersion: expectedVersion + Int64(batch.count), expectedMark: expectedMark)
        do {
            return try await connection.inTransaction(logger: logger) { connection in
                guard let mark = try await connection.guardedExecute(move, logger: logger).first else { throw HeadMoved() }
                try await connection.guardedQuery(eventsInsert(bodies: bodies), logger: logger)
                for arm in arms {
                    try await connection.guardedQuery(PostgresQuery(unsafeSQL: FoldArm.routedSQL[arm]!, binds: values), logger: logger)
                }
                return (batch.count, mark)
            }
        } catch is HeadMoved {
            return nil
        }
    }

    /// The batch as one multi-row `INSERT … VALUES` (Citus's router sends it to the shard as it
    /// is): `$1` the account, `$2` the device, then seven values an event.
    private func eventsInsert(bodies: [String]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 2 + 7 * batch.count)
        binds.append(account)
        binds.append(device)
        var sql = """
            INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body)
            VALUES ($1, $3, $2, $4, $5, $6, $7, $8, $9::jsonb)
            """
        for (offset, event) in batch.enumerated() {
            if offset > 0 {
                let n = 3 + 7 * offset
                sql += ", ($1, $\(n), $2, $\(n + 1), $\(n + 2), $\(n + 3), $\(n + 4), $\(n + 5), $\(n + 6)::jsonb)"
            }
            binds.append(expectedVersion + Int64(offset) + 1)
            binds.append(event.seq)
            binds.append(event.id)
            binds.append(event.type.rawValue)
            binds.append(event.hlc.wallMillis)
            binds.append(Int64(event.hlc.counter))
            binds.append(bodies[offset])
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// The head was written since the fold's rows were read: the routed write rolls back.
private struct HeadMoved: Error {}
