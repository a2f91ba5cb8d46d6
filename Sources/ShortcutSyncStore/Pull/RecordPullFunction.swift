import Foundation
import Logging
import PostgresNIO

/// The pull's record on Citus as one call of a distributed function, `record_pull`, which Citus
/// sends whole to the worker holding the account's shards, as it does the push's write
/// (`PushWriteFunction`): one command from the node a server talks to, instead of a transaction
/// of three router statements. Its body is `DeviceSyncStore.RecordPullStatement`'s writes as
/// fast-path statements of their own (a read of the sync row, the head's lock, the device's
/// read, the write, the token's version), with its parameters: `$1` the account, `$2` the device, `$3` the
/// version, `$4` the time, `$5` whether the pull was complete, `$6` a minute before the time.
/// Made and distributed by the migrator on a Citus coordinator, with the push's function, and
/// named by its body as that one is (`DistributedFunctions.named`).
enum RecordPullFunction: DistributedFunction {
    static let base = "record_pull"
    static let name = named()
    static let parameterTypes = ["uuid", "uuid", "bigint", "timestamptz", "boolean", "timestamptz"]

    static func definition(named name: String) -> PostgresQuery {
        """
        CREATE OR REPLACE FUNCTION \(unescaped: signature(named: name)) RETURNS void LANGUAGE plpgsql \(unescaped: DistributedFunctions.settings) AS $function$
        BEGIN
          -- Each statement a fast-path router statement of one table, run on the account's local
          -- shard (issue 66): no subquery, no CTE. When the pull was complete
          -- and the device's sync row is behind or a minute old, the row is written under a
          -- key-share lock of the account's head (an erasure takes it for update first). A row
          -- moved on between the read and the write is kept by the INSERT's own condition.
          IF $5 THEN
            PERFORM 1 FROM device_sync s
            WHERE s.account_id = $1 AND s.device_id = $2 AND s.synced_version >= $3 AND s.synced_at >= $6;
            IF NOT FOUND THEN
              PERFORM 1 FROM account_heads h WHERE h.account_id = $1 FOR KEY SHARE;
              -- A statement of its own, after the lock: it reads the device as a sign-out that
              -- held the head left it (its own snapshot), and writes nothing for one signed out.
              IF FOUND THEN
                PERFORM 1 FROM devices d WHERE d.device_id = $2 AND d.account_id = $1 AND d.token_hash IS NOT NULL;
              END IF;
              IF FOUND THEN
                INSERT INTO device_sync AS s (account_id, device_id, synced_version, synced_at)
                VALUES ($1, $2, $3, $4)
                ON CONFLICT (account_id, device_id) DO UPDATE SET synced_version = greatest(s.synced_version, excluded.synced_version),
                                                                synced_at = excluded.synced_at
                WHERE s.synced_version < excluded.synced_version OR s.synced_at < $6;
              END IF;
            END IF;
          END IF;
          UPDATE push_tokens SET pulled_version = $3
          WHERE account_id = $1 AND device_id = $2 AND pulled_version < $3;
        END;
        $function$
        """
    }
}
