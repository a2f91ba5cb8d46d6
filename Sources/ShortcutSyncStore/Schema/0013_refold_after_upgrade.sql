-- Refolding after an upgrade: a migration that adds something the fold derives (0011's
-- suggestion sums, say) leaves the rows folded before it without it. Such a migration marks the
-- accounts to refold; the maintenance tasks then fold each marked account again from its first
-- event, in one transaction that holds its head, while the service serves (its pushes wait for
-- that transaction alone), and clear the mark. `admin projections status` counts what is left.
ALTER TABLE account_heads ADD COLUMN refold_pending boolean NOT NULL DEFAULT false;
CREATE INDEX account_heads_refold ON account_heads (account_id) WHERE refold_pending;

-- Rows folded before 0011 have no suggestion sums: every account with events is refolded once.
UPDATE account_heads SET refold_pending = true WHERE version > 0;
