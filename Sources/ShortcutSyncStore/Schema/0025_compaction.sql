-- History with a horizon (issue 58, DESIGN §3 "Across the horizon"): an account's events up to a
-- version H may be compacted away; what the fold needs of them stays in its rows.
--
-- projection_accounts.horizon         NULL, or the horizon: H (8 bytes, big-endian) and the
--                                     greatest key of the compacted events (EventKey's 40 bytes).
--                                     Every fold of the account reads it with the account's row:
--                                     an event at or below that key is folded just after it.
-- projection_donation_groups.compacted NULL, or how many of the group's uncovered donations are
--                                     compacted (8 bytes) and what of its sums they still teach
--                                     (the sums' bytes): a deletion or forget after the horizon
--                                     covers them without asking the log.
-- snapshot.*                          the fold's rows of each compacted account at its horizon,
--                                     the live tables' shape: where a rebuild and `verify` start.
ALTER TABLE projection_accounts ADD COLUMN horizon bytea;
ALTER TABLE rebuild.projection_accounts ADD COLUMN horizon bytea;
ALTER TABLE projection_donation_groups ADD COLUMN compacted bytea;
ALTER TABLE rebuild.projection_donation_groups ADD COLUMN compacted bytea;

CREATE SCHEMA snapshot;
CREATE TABLE snapshot.projection_accounts (LIKE projection_accounts INCLUDING ALL);
CREATE TABLE snapshot.projection_devices (LIKE projection_devices INCLUDING ALL);
CREATE TABLE snapshot.projection_shortcuts (LIKE projection_shortcuts INCLUDING ALL);
CREATE TABLE snapshot.projection_voice_shortcuts (LIKE projection_voice_shortcuts INCLUDING ALL);
CREATE TABLE snapshot.projection_donation_groups (LIKE projection_donation_groups INCLUDING ALL);
CREATE TABLE snapshot.projection_deletion_marks (LIKE projection_deletion_marks INCLUDING ALL);

-- The log stays append-only: a delete is let through only in a session erasing an account or
-- compacting one (SET LOCAL shortcut_sync.compaction = 'on', in the compaction's transaction).
CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND (current_setting('shortcut_sync.erasure', true) = 'on'
                             OR current_setting('shortcut_sync.compaction', true) = 'on') THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the events table is append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
