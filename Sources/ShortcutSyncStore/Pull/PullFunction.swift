import Foundation
import PostgresNIO

/// The common pull (`PullStatement`'s rows) on Citus, as one call of a distributed function,
/// `pull_changes`, which Citus sends whole to the worker that holds the account's shards
/// (issue 66, item 1): the one statement is a router plan of four joins and a `UNION ALL` that
/// Citus plans anew at every pull, where each of the function's statements is a fast-path router
/// statement of one table (or a read of the reference table `projection_checkpoint`), run on the
/// local shard, planned with its values at each run (`DistributedFunctions.settings`).
///
/// Its parameters are the statement's: `$1` the account, `$2` the device, `$3` the cursor's
/// version, `$4` the most rows of each kind, `$5` the version at or below which removals are not
/// read; its columns too, in the same order and types, so
/// that `PullStatement.decodeRow` reads either. One PostgreSQL keeps the one statement, one
/// round trip there; made, distributed and named by its body as the push's write is
/// (`DistributedFunctions`).
enum PullFunction: DistributedFunction {
    static let base = "pull_changes"
    static let name = named()
    static let parameterTypes = ["uuid", "uuid", "bigint", "bigint", "bigint"]

    static func definition(named name: String) -> PostgresQuery {
        """
        CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name))
        RETURNS TABLE (part int4, n1 int8, s1 text, s2 text, u1 uuid, s3 text, n2 int8, n3 int8, n4 int8, t1 text[], n5 int8,
                       n6 int8, n7 int8)
        LANGUAGE plpgsql \(unescaped: DistributedFunctions.settings) AS $function$
        #variable_conflict use_column
        DECLARE
          live_epoch int8;
          account projection_accounts%ROWTYPE;
          device projection_devices%ROWTYPE;
          head account_heads%ROWTYPE;
          at_cursor int8;
          last_seq int8;
        BEGIN
          -- Each statement a fast-path router statement of one table, on the account's local shard
          -- (issue 66): no subquery, no join, no set operation. The parts are PullStatement's: the
          -- head (none without the live checkpoint), the device's last seq, then the shortcut and
          -- voice shortcut rows after the cursor's version, each in its index's order.
          SELECT c.epoch INTO live_epoch FROM projection_checkpoint c WHERE c.name = 'live';
          IF FOUND THEN
            SELECT a.* INTO account FROM projection_accounts a WHERE a.account_id = $1;
            SELECT d.* INTO device FROM projection_devices d WHERE d.account_id = $1 AND d.device_id = $2;
            SELECT h.* INTO head FROM account_heads h WHERE h.account_id = $1;
            IF $3 <> 0 AND $3 IS DISTINCT FROM head.version THEN
              SELECT e.history INTO at_cursor FROM events e WHERE e.account_id = $1 AND e.version = $3;
            END IF;
            RETURN QUERY SELECT 0, account.version::int8, NULL::text, NULL::text, NULL::uuid, NULL::text,
                                (live_epoch + coalesce(head.promotions, 0))::int8, account.max_hlc_wall::int8,
                                account.max_hlc_counter::int8, device.installed, device.apps_version::int8,
                                CASE WHEN coalesce(account.version, 0) = 0 THEN 0::int8
                                     WHEN account.version = head.version THEN head.history::int8 END,
                                CASE WHEN $3 = 0 THEN 0::int8 WHEN $3 = head.version THEN head.history::int8 ELSE at_cursor END;
          END IF;
          SELECT e.seq INTO last_seq FROM events e WHERE e.account_id = $1 AND e.device_id = $2 ORDER BY e.seq DESC LIMIT 1;
          IF FOUND THEN
            RETURN QUERY SELECT 1, last_seq, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::int8, NULL::int8, NULL::int8,
                                NULL::text[], NULL::int8, NULL::int8, NULL::int8;
          END IF;
          RETURN QUERY
            SELECT 2, s.version::int8, s.bundle_id, s.identifier, NULL::uuid, s.view::text, NULL::int8, NULL::int8, NULL::int8,
                   NULL::text[], NULL::int8, NULL::int8, NULL::int8
            FROM projection_shortcuts s WHERE s.account_id = $1 AND s.version > $3 AND (s.view IS NOT NULL OR s.version > $5)
            ORDER BY s.version, s.bundle_id, s.identifier LIMIT $4;
          RETURN QUERY
            SELECT 3, v.version::int8, NULL::text, NULL::text, v.voice_shortcut_id, v.view::text, NULL::int8, NULL::int8, NULL::int8,
                   NULL::text[], NULL::int8, NULL::int8, NULL::int8
            FROM projection_voice_shortcuts v WHERE v.account_id = $1 AND v.version > $3 AND (v.view IS NOT NULL OR v.version > $5)
            ORDER BY v.version, v.voice_shortcut_id LIMIT $4;
        END;
        $function$
        """
    }
}
