-- Suggestions read one row per shortcut (DESIGN §3). A request used to rank every donation group
-- of the account to choose its candidates: 160,000 rows and about 200 ms for the largest account
-- the limits allow (10,000 shortcuts of 16 groups). Each shortcut's row now also holds what the
-- ranking and the scoring need, kept by the fold: its donation count, the key of its latest
-- donation, and its groups' suggestion sums together (NULL: none). A request reads the top of
-- two indexes, at most 256 rows each, and those rows' sums.
--
-- The shortcut's row is rewritten with a new version at every donation already (the version is
-- indexed, so that update is never HOT): the two indexes add two entries to that write, where
-- indexing the groups' rows would have made their in-place updates new row versions.
ALTER TABLE projection_shortcuts ADD COLUMN donations bigint NOT NULL DEFAULT 0, ADD COLUMN latest_key bytea, ADD COLUMN habits bytea;
ALTER TABLE rebuild.projection_shortcuts ADD COLUMN donations bigint NOT NULL DEFAULT 0, ADD COLUMN latest_key bytea, ADD COLUMN habits bytea;
CREATE INDEX projection_shortcuts_most_donated ON projection_shortcuts (account_id, donations, latest_key) WHERE habits IS NOT NULL;
CREATE INDEX projection_shortcuts_latest ON projection_shortcuts (account_id, latest_key) WHERE habits IS NOT NULL;
CREATE INDEX projection_shortcuts_most_donated ON rebuild.projection_shortcuts (account_id, donations, latest_key) WHERE habits IS NOT NULL;
CREATE INDEX projection_shortcuts_latest ON rebuild.projection_shortcuts (account_id, latest_key) WHERE habits IS NOT NULL;

-- Rows folded before have none of it: every account with events is refolded once (0013).
UPDATE account_heads SET refold_pending = true WHERE version > 0;
