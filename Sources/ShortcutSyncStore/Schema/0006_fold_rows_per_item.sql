-- The fold's state in rows per item, keyed by account (DESIGN §6): a batch of the log reads only
-- the rows its events touch and writes back only what changed, so the cost of folding an event
-- does not grow with its account's history. No per-account blob any more.
--
-- projection_donation_groups  per shortcut and groupIdentifier ('' for none): how many donations
--                        no deletion covers, the key and log position of the latest of them, and
--                        the key below which deletions cover the group. A group with no
--                        uncovered donation has no row. Keys are stored as 40 bytes whose byte
--                        order is the key order (`EventKey.sortableBytes`).
-- projection_deletion_marks  per deletion selector (all of an app, an identifier, a group): the
--                        newest deletion's key.
-- projection_voice_shortcuts  gains the voice shortcut's fold state (its target, phrase and
--                        tombstone, and the owner of its phrase and whether its shortcut exists,
--                        so the row alone gives its view). A row whose view is NULL with version
--                        0 was never in the view (updates waiting for their add).
-- projection_devices     gains the key of the device's latest appsReported.
-- events_donations_by_shortcut  counts, when a late deletion lands among donations folded in
--                        earlier batches, how many of them it covers.
--
-- Projections are derived from the log: they are emptied, the checkpoint goes back to the start
-- and the epoch is raised, so the worker folds the log again and every cursor resets.
TRUNCATE projection_accounts, projection_devices, projection_shortcuts, projection_voice_shortcuts;

ALTER TABLE projection_accounts DROP COLUMN state;

ALTER TABLE projection_devices ADD COLUMN reported_key bytea NOT NULL;

CREATE TABLE projection_donation_groups (
    account_id       uuid NOT NULL,
    bundle_id        text NOT NULL,
    identifier       text NOT NULL,
    group_id         text NOT NULL,
    donations        bigint NOT NULL CHECK (donations > 0),
    latest_key       bytea NOT NULL,
    latest_position  bigint NOT NULL,
    covered_below    bytea,
    PRIMARY KEY (account_id, bundle_id, identifier, group_id)
);

CREATE INDEX projection_donation_groups_by_group ON projection_donation_groups (account_id, bundle_id, group_id)
    WHERE group_id <> '';

CREATE TABLE projection_deletion_marks (
    account_id  uuid NOT NULL,
    bundle_id   text NOT NULL,
    scope       text NOT NULL CHECK (scope IN ('all', 'identifier', 'group')),
    value       text NOT NULL,
    key         bytea NOT NULL,
    PRIMARY KEY (account_id, bundle_id, scope, value)
);

ALTER TABLE projection_voice_shortcuts
    ADD COLUMN deleted boolean NOT NULL,
    ADD COLUMN target_key bytea,
    ADD COLUMN target_bundle_id text,
    ADD COLUMN target_identifier text,
    ADD COLUMN target_title text,
    ADD COLUMN phrase_key bytea,
    ADD COLUMN phrase text,
    ADD COLUMN normalized_phrase text,
    ADD COLUMN conflicts_with uuid,
    ADD COLUMN target_available boolean NOT NULL;

CREATE INDEX projection_voice_shortcuts_by_phrase ON projection_voice_shortcuts (account_id, normalized_phrase);
CREATE INDEX projection_voice_shortcuts_by_target ON projection_voice_shortcuts (account_id, target_bundle_id, target_identifier);

CREATE INDEX events_donations_by_shortcut ON events (account_id, (body->>'bundleId'), (body->>'identifier'), hlc_wall)
    WHERE type = 'donation';

UPDATE projection_checkpoint SET tx_id = '0', position = 0, epoch = epoch + 1, updated_at = now() WHERE name = 'live';

-- The rebuild tables mirror the live ones again.
DROP TABLE rebuild.projection_accounts, rebuild.projection_devices, rebuild.projection_shortcuts,
    rebuild.projection_voice_shortcuts;
CREATE TABLE rebuild.projection_accounts (LIKE projection_accounts INCLUDING ALL);
CREATE TABLE rebuild.projection_devices (LIKE projection_devices INCLUDING ALL);
CREATE TABLE rebuild.projection_shortcuts (LIKE projection_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_voice_shortcuts (LIKE projection_voice_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_donation_groups (LIKE projection_donation_groups INCLUDING ALL);
CREATE TABLE rebuild.projection_deletion_marks (LIKE projection_deletion_marks INCLUDING ALL);
UPDATE rebuild.projection_checkpoint SET tx_id = '0', position = 0, updated_at = now() WHERE name = 'live';

-- Rows the fold updates in place, batch after batch: room on their pages lets an update that
-- changes no indexed column stay on the page (a HOT update, no index write).
ALTER TABLE projection_accounts SET (fillfactor = 70);
ALTER TABLE projection_donation_groups SET (fillfactor = 70);
ALTER TABLE projection_deletion_marks SET (fillfactor = 70);
ALTER TABLE projection_devices SET (fillfactor = 70);
ALTER TABLE rebuild.projection_accounts SET (fillfactor = 70);
ALTER TABLE rebuild.projection_donation_groups SET (fillfactor = 70);
ALTER TABLE rebuild.projection_deletion_marks SET (fillfactor = 70);
ALTER TABLE rebuild.projection_devices SET (fillfactor = 70);
