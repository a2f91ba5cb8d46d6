-- Distributes ShortcutSync's tables over a Citus cluster (DESIGN §9): every table that holds an
-- account's data is hash-distributed by account_id, all of them in one colocation group (an
-- account's rows of every table live on the same node, so a push, a pull or a fold touches one
-- shard group); the other tables are reference tables (a copy on every node).
--
-- `shortcut-sync migrate` runs this file itself after the numbered migrations whenever the
-- database has the citus extension (Migrator.distributeIfCitus), on every run: each step checks
-- whether it was done already, and a table a later migration adds is distributed by the same
-- rule (an `account_id` column: distributed with events; none: reference). It lives in a
-- subfolder, so the migrator never takes it for a numbered migration. Run on the coordinator, by
-- the database's owner (ALTER DATABASE below), with the database and `CREATE EXTENSION citus`
-- on every node and the workers added (citus_add_node). Tested on Citus 13.2.2 with
-- PostgreSQL 15: Tests/ShortcutSyncCitusTests (docs/citus.md).
--
-- WHAT CITUS REQUIRES, AND WHAT THIS SCRIPT DOES ABOUT IT
--   * A distributed table's PRIMARY KEY and UNIQUE constraints must include the distribution
--     column. Every account-keyed table has account_id first in its keys (DESIGN §6), except:
--       events       PRIMARY KEY (position): replaced here by PRIMARY KEY (account_id, position).
--                    Its UNIQUE keys (account_id, version), (account_id, device_id, seq) and
--                    (account_id, event_id) already qualify. On a worker a violated key is
--                    named after the shard's copy (`events_event_id_key_102008`): the event store
--                    recognises the base name.
--       accounts     UNIQUE (token_hash): a request knows only its token, never its account,
--       devices      PRIMARY KEY (device_id), UNIQUE (token_hash): likewise, and a device id is
--                    unique across accounts (admin import relies on it). Both stay whole, as
--                    REFERENCE tables: every node has a copy, so the token lookup of every request
--                    is answered locally, and the constraints keep their meaning. A write goes to
--                    every node (two-phase commit: max_prepared_transactions > 0 on every node);
--                    these tables are written when an account is made or its token rotated
--                    (with its generation, 0021), a device registered (with the generation that
--                    signed it in), signed out or imported: rarely, never per push or pull.
--                    Per-device state that changes often (push_tokens, 0012) lives in
--                    distributed tables instead.
--     The rebuild and snapshot schemas' tables are made with LIKE … INCLUDING ALL from the live ones; they are
--     distributed and colocated too, so that the rebuild's copy runs shard by shard.
--   * Identity columns: events.position is `bigint GENERATED ALWAYS AS IDENTITY`. Citus supports
--     bigint identity columns on distributed tables; each node draws from its own range, so
--     positions stay unique but no longer follow commit order across nodes. Nothing depends on
--     that (since 0009 no statement reads the log in global order).
--   * Triggers: events has the append-only row trigger (BEFORE UPDATE OR DELETE) and a BEFORE
--     TRUNCATE statement trigger. Citus distributes a table with triggers only with
--     citus.enable_unsafe_triggers on, and then creates them on every shard; ours read nothing
--     but their own row and a setting. The erasure of an account deletes its events after
--     `SET LOCAL shortcut_sync.erasure = 'on'`, which the trigger reads on the shard: Citus sends
--     SET LOCAL to the workers only when citus.propagate_set_commands = 'local', which this script
--     sets for the database.
--   * Statements: Citus locks rows (FOR UPDATE) only in single-shard statements, refuses STABLE
--     functions (now()) inside CASE/COALESCE of an UPDATE and any mutable function in an
--     INSERT's DO UPDATE SET, and refuses subqueries in the target list beside a distributed
--     table. The service's statements are written within these rules (see the comments at each).
--   * LISTEN/NOTIFY stays on the node that runs the statement: on a Citus cluster every server
--     process listens on every node of pg_dist_node (ClusterNotifications), whichever node it
--     runs its statements on (the coordinator, or a worker with `serve --node`).
--   * Advisory locks are per node: the migrator's lock works because it runs on the coordinator.

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

-- Reference tables first: every table of the service without an account_id column, and accounts
-- and devices (see above). devices references accounts: the foreign key is taken off while the
-- two are converted (Citus would otherwise have to turn the one still local into a "Citus local
-- table" on the way), and put back between the two reference tables, where Citus supports it.
DO $$
DECLARE
    name regclass;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'public.devices'::regclass) THEN
        ALTER TABLE devices DROP CONSTRAINT IF EXISTS devices_account_id_fkey;
    END IF;
    FOR name IN
        SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'rebuild', 'snapshot') AND c.relkind IN ('r', 'p')
          AND (c.relname IN ('accounts', 'devices') AND n.nspname = 'public'
               OR NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped))
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
        ORDER BY n.nspname, c.relname
    LOOP
        PERFORM create_reference_table(name);
        -- The rows were copied to every node; the coordinator's local copy is invisible from now
        -- on, and its space is given back.
        PERFORM truncate_local_data_after_distributing_table(name);
    END LOOP;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'devices_account_id_fkey') THEN
        ALTER TABLE devices ADD CONSTRAINT devices_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id);
    END IF;
END;
$$;

-- Every other table with an account_id column, by account_id, in events' colocation group.
DO $$
DECLARE
    name regclass;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'public.events'::regclass) THEN
        -- Its local copy stays on the coordinator's disk, invisible: the append-only trigger
        -- refuses TRUNCATE (an operator may drop it by hand, with the trigger disabled).
        PERFORM create_distributed_table('public.events', 'account_id');
    END IF;
    FOR name IN
        SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'rebuild', 'snapshot') AND c.relkind IN ('r', 'p')
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped)
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
        ORDER BY n.nspname, c.relname
    LOOP
        PERFORM create_distributed_table(name, 'account_id', colocate_with => 'public.events');
        PERFORM truncate_local_data_after_distributing_table(name);
    END LOOP;
END;
$$;

-- What was done: every table of the service with its kind (distributed tables with their
-- colocation group, which must be one and the same for all of them).
SELECT table_name, citus_table_type, distribution_column, colocation_id, shard_count
FROM citus_tables
ORDER BY citus_table_type, table_name::text;
