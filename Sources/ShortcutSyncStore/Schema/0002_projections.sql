-- The projections: what every device of an account sees, folded from the log by the sync worker.
--
-- Everything is keyed by account first, so the tables can be distributed by account_id.
--
-- projection_accounts   one row per account: the fold's state (the encoded AccountState, what the
--                       worker needs to apply the next events), the account's projection version
--                       (raised by every batch that changed one of its views), the greatest hlc and
--                       the devices that reported their apps (each has a view of its own; every
--                       other device reads the unreported view, viewer_id = the nil UUID).
-- projection_shortcuts, projection_voice_shortcuts
--                       one row per (viewer, item) that ever existed in a view. `view` is the item
--                       as the viewer sees it, NULL once it left the view (a tombstone, so a pull
--                       with a cursor learns of the removal); `version` is the account version
--                       that last changed the row. A pull after version v reads the rows above v.
-- projection_checkpoint the last log event folded in, written in the same transaction as the
--                       projections. `epoch` changes when the projections are replaced by a
--                       rebuild: cursors of another epoch are answered with the whole view.
CREATE TABLE projection_accounts (
    account_id       uuid PRIMARY KEY,
    version          bigint NOT NULL,
    state            jsonb NOT NULL,
    max_hlc_wall     bigint,
    max_hlc_counter  bigint,
    reported_devices uuid[] NOT NULL
);

CREATE TABLE projection_shortcuts (
    account_id  uuid NOT NULL,
    viewer_id   uuid NOT NULL,
    bundle_id   text NOT NULL,
    identifier  text NOT NULL,
    view        jsonb,
    version     bigint NOT NULL,
    PRIMARY KEY (account_id, viewer_id, bundle_id, identifier)
);

CREATE INDEX projection_shortcuts_changes ON projection_shortcuts (account_id, viewer_id, version);

CREATE TABLE projection_voice_shortcuts (
    account_id         uuid NOT NULL,
    viewer_id          uuid NOT NULL,
    voice_shortcut_id  uuid NOT NULL,
    view               jsonb,
    version            bigint NOT NULL,
    PRIMARY KEY (account_id, viewer_id, voice_shortcut_id)
);

CREATE INDEX projection_voice_shortcuts_changes ON projection_voice_shortcuts (account_id, viewer_id, version);

CREATE TABLE projection_checkpoint (
    name        text PRIMARY KEY,
    tx_id       xid8 NOT NULL,
    position    bigint NOT NULL,
    epoch       bigint NOT NULL,
    updated_at  timestamptz
);

INSERT INTO projection_checkpoint (name, tx_id, position, epoch, updated_at) VALUES ('live', '0', 0, 1, now());

-- The same tables for a replay of the whole log, built beside the live ones (admin verify,
-- projections rebuild) while the worker keeps the live ones current.
CREATE SCHEMA rebuild;

CREATE TABLE rebuild.projection_accounts (LIKE projection_accounts INCLUDING ALL);
CREATE TABLE rebuild.projection_shortcuts (LIKE projection_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_voice_shortcuts (LIKE projection_voice_shortcuts INCLUDING ALL);
CREATE TABLE rebuild.projection_checkpoint (LIKE projection_checkpoint INCLUDING ALL);

INSERT INTO rebuild.projection_checkpoint (name, tx_id, position, epoch, updated_at) VALUES ('live', '0', 0, 1, now());
