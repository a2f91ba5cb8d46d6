-- Suggestions (DESIGN §3): the fold keeps, per donation group, the decayed sums of its uncovered
-- donations eligible for prediction, per device and hour of the week, as exact integers
-- (`ShortcutHabits.bytes`; NULL: none). They change with the group's row, in the same
-- statements, so they cost the fold no read or write of their own; `GET /v1/suggestions`
-- reads them for one account through the primary key (account_id first).
--
-- Rows folded before this migration have no sums: the service learns from new donations at
-- once, and from the older ones after `admin projections rebuild` (which folds the log again;
-- until then `admin verify` reports those groups' sums as differences).
ALTER TABLE projection_donation_groups ADD COLUMN habits bytea;
ALTER TABLE rebuild.projection_donation_groups ADD COLUMN habits bytea;
