-- Distributes ShortcutSync's tables over a Citus cluster (DESIGN §9): every table that holds an
-- account's data is hash-distributed by account_id, all of them in one colocation group (an
-- account's rows of every table live on the same node, so a push, a pull or a fold touches one
-- shard group); small shared tables are reference tables (a copy on every node).
--
-- WHAT IS AND IS NOT PROVEN (read this first)
--   Proven on this project's machines:
--   * every statement of the push, pull, stream and fold paths names exactly one account
--     (`account_id = $n`): .ci/check-sql.py parses every SQL statement of Schema/ and the Swift
--     sources with PostgreSQL's parser (pglast) in CI; the cross-account statements are the ones
--     listed in .ci/cross-account-statements.txt, each with why;
--   * the service, its tests and its benchmarks run on one (plain) PostgreSQL;
--   * this file parses with PostgreSQL's parser (pglast 8.7, PL/pgSQL bodies included);
--   * it ran, twice (the second run changing nothing), on a scratch PostgreSQL 15 migrated to
--     0009, with stand-ins for create_distributed_table, create_reference_table, pg_dist_partition
--     and citus_tables that make the checks of Citus's that this schema could fail (unique keys
--     without the distribution column, triggers, identity columns that are not bigint, foreign
--     keys to tables that are not Citus tables, colocation on a different column type): the
--     events key change, the foreign key's removal and return and every table's choice pass them.
--   Only on paper (Citus is not installable on these machines, so this script has never run on a
--   Citus cluster): that Citus accepts it; that each statement that names one account is routed
--   to a single shard (a statement can name its account and still be planned through the
--   coordinator, e.g. an INSERT … SELECT whose account is a parameter rather than the source's
--   column: correct, but two round trips); and the Citus behaviour cited below, which was read in
--   Citus's documentation and source (v11.2 to v14), not observed.
--
-- HOW TO APPLY
--   On a cluster with Citus >= 12.1 (11.2 at the very least: identity columns) whose workers are
--   added (citus_add_node) and where the service's database exists on every node with
--   `CREATE EXTENSION citus` in it, as a superuser, on the coordinator, with every server and
--   worker process of the service stopped:
--     1. `shortcut-sync migrate --database-url <coordinator>`: the numbered migrations, on the
--        coordinator, while every table is still local (this script is written for the schema
--        after 0009_account_versions.sql, with 0012's push_tokens; it lives in a subfolder so that the migrator, which
--        reads only the top-level numbered files, never runs it);
--     2. `psql -v ON_ERROR_STOP=1 -d <database> -f Schema/citus/distribute.sql`.
--   Each step checks whether it was done already, so the script can be run again after a failed
--   run. A later migration that adds an account-keyed table must add it here too (and the
--   servers' configuration must point every process at the coordinator, see NOTIFY below).
--
-- WHAT CITUS REQUIRES, AND WHAT THIS SCRIPT DOES ABOUT IT
--   * A distributed table's PRIMARY KEY and UNIQUE constraints must include the distribution
--     column. Every account-keyed table has account_id first in its keys (DESIGN §6), except:
--       events       PRIMARY KEY (position): replaced here by PRIMARY KEY (account_id, position)
--                    (the same index with account_id in front; position stays unique per node,
--                    see identity below). Its UNIQUE keys (account_id, version),
--                    (account_id, device_id, seq) and (account_id, event_id) already qualify.
--       accounts     UNIQUE (token_hash): a request knows only its token, never its account,
--       devices      PRIMARY KEY (device_id), UNIQUE (token_hash): likewise, and a device id is
--                    unique across accounts (admin import relies on it). Both stay whole, as
--                    REFERENCE tables: every node has a copy, so the token lookup of every request
--                    is answered locally by whichever node runs it, and the constraints keep
--                    their meaning. The price is that a write goes to every node (two-phase
--                    commit); that is acceptable because these tables are written only when an
--                    account is made, a device is registered, signed out or imported: rarely,
--                    never per push or pull. A later migration would move the tokens to a table
--                    of their own, `tokens (token_hash PRIMARY KEY, account_id, device_id)`,
--                    distributed by token_hash, make devices' key (account_id, device_id) and
--                    distribute accounts and devices by account_id with the others. Per-device
--                    state that changes often (the push token and last background wake of
--                    DESIGN §6) must not be added to `devices` while it is a reference table.
--     projection_parked_accounts has PRIMARY KEY (account_id): distributed like the others.
--     push_tokens (0012: devices' APNs tokens and wake state, kept out of the reference table
--     `devices` as said above) has PRIMARY KEY (account_id, device_id): distributed and colocated.
--     Its wakers' scan (PushTokenStore.claimDue: the due wakes of every account, FOR UPDATE SKIP
--     LOCKED) is cross-account like the maintenance queue's and must be split the same way (a
--     plain read of the due rows, then a lock of each by its account_id) before a cluster runs
--     wakers. The sweep (an UPDATE joining push_tokens and account_heads on account_id) and the
--     scheduling of one notification's accounts (an UPDATE joining push_tokens with unnest() of
--     the accounts) are multi-shard UPDATEs: correct on Citus (colocated, the join on the
--     distribution column), but each touches every shard; a cluster with many nodes would
--     rather group the notification's accounts by shard.
--     The rebuild schema's tables are made with LIKE … INCLUDING ALL from the live ones, so their
--     keys are the live ones'; they are distributed and colocated too, so that the rebuild's swap
--     (INSERT INTO projection_x SELECT * FROM rebuild.projection_x) runs shard by shard.
--   * Identity columns: events.position is `bigint GENERATED ALWAYS AS IDENTITY`. Citus supports
--     bigint identity columns on distributed tables since 11.2 (inserts into such a column were
--     fixed in 13.0.2); each node draws from its own range of the sequence, so positions stay
--     unique but no longer follow commit or insertion order across nodes. Nothing depends on that
--     any more: since 0009 no statement reads the log in global order (DESIGN §9: no global log
--     order); events.tx_id, the transaction id the old worker ordered by, is dropped by 0010.
--   * Triggers: events has the append-only row trigger (BEFORE UPDATE OR DELETE) and a BEFORE
--     TRUNCATE statement trigger. Citus refuses to distribute a table that has triggers unless
--     citus.enable_unsafe_triggers is on, and then creates them on every shard. The trigger is
--     "unsafe" only in Citus's general sense (it could read other shards); ours reads nothing but
--     its own row and a setting. The erasure of an account deletes its events after
--     `SET LOCAL shortcut_sync.erasure = 'on'`, which the trigger reads on the shard: Citus sends
--     SET LOCAL to the workers only when citus.propagate_set_commands = 'local', so this script
--     sets that for the database. Without it, erasure would be refused on a cluster.
--   * Row locks across shards: Citus runs SELECT … FOR UPDATE only on a single shard (or
--     reference tables). The maintenance queue's statement (ProjectionRowStore+Maintenance.swift,
--     takeAccountBehind: FOR UPDATE OF account_heads SKIP LOCKED over every account) is a
--     cross-account statement and is refused by Citus as it is. Before a cluster runs the
--     maintenance tasks, that statement must become two: a plain read of a few accounts behind
--     (any shard, no lock), then a lock of one of them by its account_id (single shard,
--     FOR UPDATE SKIP LOCKED, and the behind-check repeated). The same goes for the rebuild's
--     LOCK TABLE account_heads (Citus propagates LOCK to the shards, which is what the rebuild
--     wants, but it blocks every node's pushes while held).
--   * LISTEN/NOTIFY stays on the node that runs the statement: every server process must connect
--     to the same node (the coordinator) for the pokes of DESIGN §6 to reach every stream.
--   * Advisory locks are per node: the migrator's lock works because it runs on the coordinator.
--   * The migrator's own table (schema_migrations) and the small shared tables
--     (projection_checkpoint: the cursor epoch; service_secrets: the cursor signing key;
--     rebuild.projection_checkpoint) are reference tables, so that a pull's join with the epoch
--     is answered on the account's node.

-- Fails at once where the server has no Citus.
CREATE EXTENSION IF NOT EXISTS citus;

-- The erasure's SET LOCAL must reach the shards (see above): for every later session of this
-- database, and this one.
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
END;
$$;
SET citus.propagate_set_commands = 'local';
-- The append-only triggers follow events to its shards (see above).
SET citus.enable_unsafe_triggers = on;

-- events: its primary key takes the distribution column (position alone cannot be unique across
-- shards). Skipped once done.
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
        WHERE c.conrelid = 'public.events'::regclass AND c.contype = 'p' AND a.attname = 'account_id'
    ) THEN
        ALTER TABLE events DROP CONSTRAINT events_pkey;
        ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (account_id, position);
    END IF;
END;
$$;

-- Reference tables first. devices references accounts: the foreign key is taken off while the
-- two are converted (Citus would otherwise have to turn the one still local into a "Citus local
-- table" on the way), and put back between the two reference tables, where Citus supports it.
DO $$
DECLARE
    name text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'public.devices'::regclass) THEN
        ALTER TABLE devices DROP CONSTRAINT IF EXISTS devices_account_id_fkey;
    END IF;
    FOREACH name IN ARRAY ARRAY[
        'public.schema_migrations',
        'public.service_secrets',
        'public.projection_checkpoint',
        'rebuild.projection_checkpoint',
        'public.accounts',      -- UNIQUE (token_hash): see above
        'public.devices'        -- PRIMARY KEY (device_id), UNIQUE (token_hash): see above
    ] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = name::regclass) THEN
            PERFORM create_reference_table(name::regclass);
        END IF;
    END LOOP;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'devices_account_id_fkey') THEN
        ALTER TABLE devices ADD CONSTRAINT devices_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id);
    END IF;
END;
$$;

-- The account-keyed tables, by account_id, in events' colocation group.
DO $$
DECLARE
    name text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'public.events'::regclass) THEN
        PERFORM create_distributed_table('public.events', 'account_id');
    END IF;
    FOREACH name IN ARRAY ARRAY[
        'public.account_heads',
        'public.projection_accounts',
        'public.projection_shortcuts',
        'public.projection_voice_shortcuts',
        'public.projection_devices',
        'public.projection_donation_groups',
        'public.projection_deletion_marks',
        'public.projection_parked_accounts',
        'public.push_tokens',   -- 0012: PRIMARY KEY (account_id, device_id)
        'rebuild.projection_accounts',
        'rebuild.projection_shortcuts',
        'rebuild.projection_voice_shortcuts',
        'rebuild.projection_devices',
        'rebuild.projection_donation_groups',
        'rebuild.projection_deletion_marks'
    ] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = name::regclass) THEN
            PERFORM create_distributed_table(name::regclass, 'account_id', colocate_with => 'public.events');
        END IF;
    END LOOP;
END;
$$;

-- What was done: every table of the service with its kind (distributed tables with their
-- colocation group, which must be one and the same for all of them).
SELECT table_name, citus_table_type, distribution_column, colocation_id, shard_count
FROM citus_tables
ORDER BY citus_table_type, table_name::text;
