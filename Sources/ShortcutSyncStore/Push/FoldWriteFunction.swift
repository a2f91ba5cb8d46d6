import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The maintenance fold's write on Citus (issue 66, item 1), as one call of a distributed
/// function, `fold_write`: the fold arms of the push's write (`PushWriteFunction.armsBody`), each
/// arm one fast-path statement a row up to `FastPathRows.maximum` rows and its `routedSQL` past
/// it, without the head's check and move and the batch, which a maintenance step does not write.
/// The step calls it inside the transaction that holds the account's head, so Citus does not send
/// the call to a worker whole (it delegates a call only outside a transaction block): it runs
/// where it is called, each statement routed to the account's shard by itself, as a fast-path
/// statement (a worker runs them on its local shard). Before, each arm was its `routedSQL`, an
/// `INSERT … SELECT` pushed down and planned against every shard each time.
///
/// Its parameters are `FoldWriteStatement`'s, `$1`…`$50`, in their types, then the arms' bits
/// (`$51`, `PushWriteFunction.bits`). Made, distributed and named by its body as the push's write
/// is (`DistributedFunctions`); one PostgreSQL keeps the one statement.
enum FoldWriteFunction: DistributedFunction {
    static let base = "fold_write"
    static let name = named()

    /// `FoldWriteStatement`'s `$1`…`$50` (the append statement's first fifty), then the bits.
    static var parameterTypes: [String] {
        AppendFoldedStatement<EveryFoldArm>.bindingDataTypes.prefix(50).map { $0.knownSQLName! } + ["INTEGER"]
    }

    /// The call's parameters, `$1`…`$51` (made once: every maintenance step on Citus sends it).
    static let placeholders = (1...parameterTypes.count).map { "$\($0)" }.joined(separator: ", ")

    static func definition(named name: String) -> PostgresQuery {
        """
        CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name)) RETURNS void LANGUAGE plpgsql \(unescaped: DistributedFunctions.settings) AS $function$
        DECLARE
          event_body jsonb;
          event_wall int8;
          event_counter int8;
        BEGIN
        \(unescaped: PushWriteFunction.armsBody(bits: "$51"))
        END;
        $function$
        """
    }
}

extension FoldWriteStatement {
    /// The arms that write something for `result` by one call of `fold_write`
    /// (`FoldWriteFunction`), bound with the statement's values: the live tables' write on Citus.
    static func runAsDistributedFunction(account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection,
                                         logger: Logger) async throws {
        var bindings = try Self(account: account, result).makeBindings()
        bindings.append(PushWriteFunction.bits(FoldArm.writing(result)))
        try await connection.guardedQuery(
            PostgresQuery(unsafeSQL: "SELECT \(FoldWriteFunction.name)(\(FoldWriteFunction.placeholders))", binds: bindings),
            logger: logger).drain()
    }
}
