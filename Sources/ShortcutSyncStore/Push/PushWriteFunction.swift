import Crypto
import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The push's optimistic write on Citus as one call of a distributed function,
/// `push_write_folded`, which Citus sends whole to the worker holding the account's shards
/// (docs/citus.md, "One call a push"): the coordinator, or the node a server is attached to,
/// forwards one command instead of a transaction of router statements, and on the worker each of
/// the function's statements runs on the local shard.
///
/// Its body is a sequence of statements Citus routes to the account's shards as they are: the head's
/// check and move first (no row, and the function returns NULL having written nothing), then the
/// batch, then each fold arm the push writes (`FoldArm.routedSQL`, a bit of `$62` each). Its
/// parameters are the one statement's, `$1`…`$61`, in its types (`bindingDataTypes`), and the arms'
/// bits: it is made from the same texts, so it cannot say something else. It is created (or
/// replaced, when this build's arms differ) and distributed by the migrator on a Citus
/// coordinator, after the tables are (`DistributedFunctions`); it exists nowhere else. Its name
/// holds a digest of its body (`DistributedFunctions.named`): a server of another build, during
/// a rolling upgrade, calls the body it was built with, never one this build put in its place.
enum PushWriteFunction: DistributedFunction {
    static let base = "push_write_folded"
    static let name = named()

    /// The parameters' types as SQL names, `$1`…`$61`, then the arms' bits.
    static var parameterTypes: [String] {
        AppendFoldedStatement<EveryFoldArm>.bindingDataTypes.map { $0.knownSQLName! } + ["INTEGER"]
    }

    /// The call's parameters, `$1`…`$62` (made once: every push on Citus sends it).
    static let placeholders = (1...62).map { "$\($0)" }.joined(separator: ", ")

    /// Each arm's bit in `$62`.
    static func bit(of arm: FoldArm) -> Int32 { 1 << Int32(FoldArm.allCases.firstIndex(of: arm)!) }

    /// The bits of `arms`.
    static func bits(_ arms: Set<FoldArm>) -> Int32 { arms.reduce(0) { $0 | bit(of: $1) } }

    /// The arms asked for by the bits of `bits` (a parameter), as a function's statements: each
    /// arm one row a statement up to `FastPathRows.maximum` rows (`FoldArm.fastPathSQL`), its
    /// `routedSQL` past it. They need the variables `event_body jsonb`, `event_wall int8` and
    /// `event_counter int8` declared. This function's body and `fold_write`'s (`FoldWriteFunction`).
    static func armsBody(bits: String) -> String {
        FoldArm.allCases.map { arm in
            let (rows, fastPath) = FoldArm.fastPathSQL[arm]!
            return rows == "1" ? """
              IF (\(bits) & \(bit(of: arm))) <> 0 THEN
            \(fastPath)
              END IF;
            """ : """
              IF (\(bits) & \(bit(of: arm))) <> 0 THEN
                IF coalesce(array_length(\(rows), 1), 0) <= \(FastPathRows.maximum) THEN
                  FOR ix IN 1 .. coalesce(array_length(\(rows), 1), 0) LOOP
            \(fastPath)
                  END LOOP;
                ELSE
            \(FoldArm.routedSQL[arm]!);
                END IF;
              END IF;
            """
        }.joined(separator: "\n")
    }

    /// `CREATE OR REPLACE FUNCTION`: the head's move, the batch, then the arms asked for.
    static func definition(named name: String) -> PostgresQuery {
        let arms = armsBody(bits: "$62")
        return """
            CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name)) RETURNS text LANGUAGE plpgsql \(unescaped: DistributedFunctions.settings) AS $function$
            DECLARE
              new_mark text;
              event_body jsonb;
              event_wall int8;
              event_counter int8;
            BEGIN
              UPDATE account_heads h SET version = $59, folded_version = $59, history = $61
              WHERE h.account_id = $1 AND h.version = $52 AND h.folded_version = $52 AND \(unescaped: AccountHead.markSQL) = $60
              RETURNING \(unescaped: AccountHead.markSQL) INTO new_mark;
              IF new_mark IS NULL THEN
                RETURN NULL;
              END IF;
              IF coalesce(array_length($53, 1), 0) <= 10 THEN -- FastPathRows.maximum
                FOR ix IN 1 .. coalesce(array_length($53, 1), 0) LOOP
                  INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
                  VALUES ($1, $52 + ix, $51, $54[ix], $53[ix], $55[ix], $56[ix], $57[ix], $58[ix]::jsonb, $61);
                END LOOP;
              ELSE
                INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
                SELECT $1, $52 + b.ord, $51, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb, $61
                FROM unnest($53::uuid[], $54::int8[], $55::text[], $56::int8[], $57::int8[], $58::text[])
                     WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord);
              END IF;
            \(unescaped: arms)
              RETURN new_mark;
            END;
            $function$
            """
    }
}

extension AppendFoldedStatement {
    /// The write as one call of `push_write_folded` (`PushWriteFunction`), for Citus: how many
    /// events it appended and the head's new mark; nil when the head's check failed (nothing was
    /// written). A unique violation (a retry, a reused id) fails the call as it fails the one
    /// statement, and the caller tells which.
    func runAsDistributedFunction(on connection: PostgresConnection, logger: Logger) async throws -> (appended: Int, mark: String)? {
        var bindings = try makeBindings()
        bindings.append(PushWriteFunction.bits(FoldArm.writing(result)))
        let rows = try await connection.guardedQuery(
            PostgresQuery(unsafeSQL: "SELECT \(PushWriteFunction.name)(\(PushWriteFunction.placeholders))", binds: bindings),
            logger: logger)
        guard let mark = try await rows.decode(String?.self).collectAll().first ?? nil else { return nil }
        return (batch.count, mark)
    }
}
