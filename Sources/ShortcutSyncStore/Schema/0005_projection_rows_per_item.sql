-- One projected row per item and account, not per device: a device's installed apps filter the
-- account's view when it pulls (and `appInstalled` is computed then), so folding an event writes
-- the rows of the items it changed once, however many devices reported their apps.
--
-- projection_devices  one row per device that reported its apps: the apps it reported last
--                     (latest by key), and `apps_version`, raised each time that set changes. A
--                     pull's cursor carries the apps_version it was made with; a cursor made
--                     with other apps gets the whole view (`reset: true`).
--
-- Projections are derived from the log: they are emptied here, the checkpoint goes back to the
-- start and the epoch is raised, so the worker folds the log again and every cursor resets.
TRUNCATE projection_accounts, projection_shortcuts, projection_voice_shortcuts;

ALTER TABLE projection_shortcuts DROP CONSTRAINT projection_shortcuts_pkey;
ALTER TABLE projection_shortcuts DROP COLUMN viewer_id;
ALTER TABLE projection_shortcuts ADD PRIMARY KEY (account_id, bundle_id, identifier);
CREATE INDEX projection_shortcuts_changes ON projection_shortcuts (account_id, version);

ALTER TABLE projection_voice_shortcuts DROP CONSTRAINT projection_voice_shortcuts_pkey;
ALTER TABLE projection_voice_shortcuts DROP COLUMN viewer_id;
ALTER TABLE projection_voice_shortcuts ADD PRIMARY KEY (account_id, voice_shortcut_id);
CREATE INDEX projection_voice_shortcuts_changes ON projection_voice_shortcuts (account_id, version);

ALTER TABLE projection_accounts DROP COLUMN reported_devices;

CREATE TABLE projection_devices (
    account_id    uuid NOT NULL,
    device_id     uuid NOT NULL,
    installed     text[] NOT NULL,
    apps_version  bigint NOT NULL,
    PRIMARY KEY (account_id, device_id)
);

UPDATE projection_checkpoint SET tx_id = '0', position = 0, epoch = epoch + 1, updated_at = now() WHERE name = 'live';

-- The rebuild tables mirror the live ones again.
DROP TABLE rebuild.projection_accounts, rebuild.projection_shortcuts, rebuild.projection_voice_shortcuts;
CREATE TABLE rebuild.projection_accounts (LIKE projection_accounts INCLUDING ALL);
CREATE TABLE rebuild.projection_shortcuts (LIKE projection_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_voice_shortcuts (LIKE projection_voice_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_devices (LIKE projection_devices INCLUDING ALL);
UPDATE rebuild.projection_checkpoint SET tx_id = '0', position = 0, updated_at = now() WHERE name = 'live';
