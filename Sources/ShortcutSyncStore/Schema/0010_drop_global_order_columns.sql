-- What the global log order left behind, which nothing reads since 0009 (DESIGN §6, §9):
--
-- events.tx_id             the appending transaction's id, by which the old worker read the log in
--                          order; computed for every event appended, read by no one.
-- projection_checkpoint.tx_id, .position   where the old worker stood; the row keeps its epoch.
-- projection_accounts.reset_version        the version below which an account's cursors were
--                          reset after the old worker wrote its rows anew (unparking); a parked
--                          account now folds on from where it stopped, and nothing writes it.
ALTER TABLE events DROP COLUMN tx_id;
ALTER TABLE projection_checkpoint DROP COLUMN tx_id, DROP COLUMN position;
ALTER TABLE rebuild.projection_checkpoint DROP COLUMN tx_id, DROP COLUMN position;
ALTER TABLE projection_accounts DROP COLUMN reset_version;
ALTER TABLE rebuild.projection_accounts DROP COLUMN reset_version;
