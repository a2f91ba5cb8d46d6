-- Views current at commit (DESIGN §4, §6): the push folds its own events, in its own
-- transaction, and each account counts its own versions. No global log order is needed any more.
--
-- events.version       the event's place in its account's log (1, 2, 3… without gaps); it was
--                      `stream_version`, assigned the same way, so existing events keep theirs.
-- account_heads        one row per account, the head a push locks: `version`, the account's
--                      version (that of its last event), and `folded_version`, how far the
--                      projections include its events. A push that finds the two equal folds its
--                      batch and moves both; otherwise (after `admin import`, or while the account
--                      is parked) it only appends, and the maintenance tasks fold the account,
--                      taking it with FOR UPDATE SKIP LOCKED from the accounts behind.
-- projection_accounts.version  now the account version its rows include (was: a counter of the
--                      batches that changed its view). A row's `version` is the account version
--                      that last changed it, a cursor's the account version it was answered at.
-- projection_donation_groups.latest_version  the account version of the group's latest uncovered
--                      donation (was its global position).
-- projection_parked_accounts.failed_version  the account version at which its fold failed.
-- projection_checkpoint  keeps only its epoch (raised here: every cursor of the old scheme gets
--                      the whole view once); the worker no longer follows a global position.
--
-- Views stay as they are: an account whose events were all folded keeps its rows and is current
-- at once. An account the old worker had not caught up with, or had parked, is emptied and folded
-- again by the maintenance tasks (its devices get their whole view).
ALTER TABLE events RENAME COLUMN stream_version TO version;
ALTER TABLE events RENAME CONSTRAINT events_stream_version_key TO events_version_key;
ALTER TABLE events RENAME CONSTRAINT events_stream_version_positive TO events_version_positive;

CREATE TABLE account_heads (
    account_id      uuid PRIMARY KEY,
    version         bigint NOT NULL DEFAULT 0,
    folded_version  bigint NOT NULL DEFAULT 0,
    CONSTRAINT account_heads_folded_within CHECK (folded_version BETWEEN 0 AND version)
) WITH (fillfactor = 70);

CREATE INDEX account_heads_behind ON account_heads (account_id) WHERE folded_version < version;

-- Every account gets its head; what the old worker had folded of it stays folded when it is all of it.
INSERT INTO account_heads (account_id, version, folded_version)
SELECT a.account_id, coalesce(s.version, 0),
       CASE WHEN coalesce(s.unfolded, 0) = 0 AND p.account_id IS NULL THEN coalesce(s.version, 0) ELSE 0 END
FROM accounts a
LEFT JOIN (
    SELECT e.account_id, max(e.version) AS version,
           count(*) FILTER (WHERE (e.tx_id, e.position) > (c.tx_id, c.position)) AS unfolded
    FROM events e CROSS JOIN projection_checkpoint c
    WHERE c.name = 'live'
    GROUP BY e.account_id
) s ON s.account_id = a.account_id
LEFT JOIN projection_parked_accounts p ON p.account_id = a.account_id;

-- Accounts to fold again: their rows go, and their devices' cursors reset.
CREATE TEMPORARY TABLE refold AS SELECT account_id FROM account_heads WHERE folded_version < version;
DELETE FROM projection_shortcuts USING refold WHERE projection_shortcuts.account_id = refold.account_id;
DELETE FROM projection_voice_shortcuts USING refold WHERE projection_voice_shortcuts.account_id = refold.account_id;
DELETE FROM projection_devices USING refold WHERE projection_devices.account_id = refold.account_id;
DELETE FROM projection_donation_groups USING refold WHERE projection_donation_groups.account_id = refold.account_id;
DELETE FROM projection_deletion_marks USING refold WHERE projection_deletion_marks.account_id = refold.account_id;
DELETE FROM projection_accounts USING refold WHERE projection_accounts.account_id = refold.account_id;
DROP TABLE refold;
DELETE FROM projection_parked_accounts;

-- The others are current at their head.
UPDATE projection_accounts p SET version = h.version FROM account_heads h WHERE h.account_id = p.account_id;

ALTER TABLE projection_donation_groups ADD COLUMN latest_version bigint;
UPDATE projection_donation_groups g SET latest_version = e.version
FROM events e WHERE e.account_id = g.account_id AND e.position = g.latest_position;
ALTER TABLE projection_donation_groups ALTER COLUMN latest_version SET NOT NULL;
ALTER TABLE projection_donation_groups DROP COLUMN latest_position;

ALTER TABLE projection_parked_accounts RENAME COLUMN first_position TO failed_version;

UPDATE projection_checkpoint SET epoch = epoch + 1, updated_at = now() WHERE name = 'live';

-- The rebuild tables mirror the live ones again (they hold nothing between rebuilds).
DROP TABLE rebuild.projection_donation_groups;
CREATE TABLE rebuild.projection_donation_groups (LIKE projection_donation_groups INCLUDING ALL);
ALTER TABLE rebuild.projection_donation_groups SET (fillfactor = 70);
TRUNCATE rebuild.projection_accounts, rebuild.projection_devices, rebuild.projection_shortcuts,
    rebuild.projection_voice_shortcuts, rebuild.projection_deletion_marks;

-- Nothing reads the log in global order any more: its index goes (`position` stays, the order
-- events were recorded in on this PostgreSQL, for operators).
DROP INDEX events_log_order;
