-- How many shortcuts each account's view holds, on the account's row (issue 30): every fold keeps
-- it (the domain's `AccountBatchResult.shortcutCount`: the count before, with the shortcuts the
-- batch added and without those it removed), and a push checks DESIGN §5's bound on shortcuts
-- against it. Before, a push that added a shortcut counted the account's view in a round trip
-- of its own, a read of every shortcut the account holds (up to 10,000) for each such push.
--
-- Counted here once for the rows already folded, live and rebuilt, from the views as they are.
ALTER TABLE projection_accounts ADD COLUMN shortcut_count integer NOT NULL DEFAULT 0;
ALTER TABLE rebuild.projection_accounts ADD COLUMN shortcut_count integer NOT NULL DEFAULT 0;

UPDATE projection_accounts a SET shortcut_count = c.held
FROM (SELECT account_id, count(*) AS held FROM projection_shortcuts WHERE view IS NOT NULL GROUP BY account_id) c
WHERE c.account_id = a.account_id;

UPDATE rebuild.projection_accounts a SET shortcut_count = c.held
FROM (SELECT account_id, count(*) AS held FROM rebuild.projection_shortcuts WHERE view IS NOT NULL GROUP BY account_id) c
WHERE c.account_id = a.account_id;
