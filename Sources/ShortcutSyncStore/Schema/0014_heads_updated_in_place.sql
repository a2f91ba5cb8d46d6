-- Every push moves its account's head (version and folded_version together). PostgreSQL can
-- rewrite such a row in place (a HOT update: no new index entries, the old version pruned on its
-- own page) only when no index depends on a column whose value changed. The partial index
-- account_heads_behind (0009) names version and folded_version in its predicate, so no push's
-- update of a head was HOT: each one added an entry to account_heads_pkey and left a dead one,
-- and the next push of the account read past them (measured: 0 HOT of 389 head updates).
--
-- The predicate now reads a stored generated column, `behind`. PostgreSQL compares a column's
-- old and new values to decide, so a push that folds its own events (both versions move, the
-- account stays current) changes no indexed value and its update stays on the page. Every
-- statement that looks for the accounts behind says `WHERE behind`. fillfactor 70 (0009)
-- leaves room on each page for the new version of a row.
ALTER TABLE account_heads ADD COLUMN behind boolean GENERATED ALWAYS AS (folded_version < version) STORED;
CREATE INDEX account_heads_behind_flag ON account_heads (account_id) WHERE behind;
DROP INDEX account_heads_behind;
