-- What each device has of its account (issue 33: "did my iPad get it?"): the account version its
-- latest complete pull brought it to, and when it pulled. An app shows "synced to your iPad two
-- minutes ago", and whether a change it pushed has reached a given device.
--
-- Written by pulls, not by the fold: it is not a projection, a rebuild leaves it as it is. A
-- table apart from `devices`, which is a reference table on Citus (written on every node): this
-- one has `account_id` and is distributed with the account's other rows (citus/distribute.sql),
-- so a pull's write stays on the account's shard. A pull writes its row when the version moves
-- on, or when the row is a minute old (so that "when" is never more than a minute behind, and a
-- device that pulls in a loop without changes writes at most once a minute).
CREATE TABLE device_sync (
    account_id     uuid NOT NULL,
    device_id      uuid NOT NULL,
    synced_version bigint NOT NULL,
    synced_at      timestamptz NOT NULL,
    PRIMARY KEY (account_id, device_id)
);
