-- A pull's cursor names the history it was issued in (issue 64, item 2, DESIGN §5): after a
-- restored backup, a point-in-time recovery or an import, an account's versions past the backup
-- are assigned again, to other events, and a cursor of the lost timeline must not be the base of
-- a diff against them.
--
-- events.history        the random value the push that appended the event drew (one per push:
--                       every event of a batch has it); NULL for events appended before this
--                       migration. Written by the push's existing INSERT, no statement more.
-- account_heads.history the history value of the push that assigned the head's version (0 while
--                       the account has none). Written in the push's existing UPDATE of the head;
--                       no index reads it, so that update stays heap-only (HOT, 0014).
--
-- A cursor carries the history value of its version (PullCursor.history); the pull reads the
-- database's value of that version with the head it already reads (the head's, when the cursor is
-- at the head's version, else the event's at that version: one probe of
-- events_stream_version_key) and answers a cursor whose value differs, or is unknown, with the
-- whole view (reset: true). A restored database has the rows of the backup, so a cursor at a
-- version it had keeps its diff; the versions assigned after the restore have new values.
--
-- Adding a nullable column, or a NOT NULL one with a constant default, rewrites nothing. Both
-- tables are distributed on Citus (citus/distribute.sql): the columns are added on every shard.
ALTER TABLE events ADD COLUMN history bigint;
ALTER TABLE account_heads ADD COLUMN history bigint NOT NULL DEFAULT 0;
-- The accounts that have versions already: a value of this database and this moment, so that a
-- restore of a backup taken before this migration, migrated again, names another history. (now()
-- is evaluated once, on the coordinator on Citus; md5 is immutable.)
UPDATE account_heads SET history = ('x' || substr(md5(account_id::text || now()::text), 1, 16))::bit(64)::bigint
WHERE version > 0;
