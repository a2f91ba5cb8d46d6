-- Compaction that runs by itself (issue 58, item 3; docs/operating.md "How much disk a person
-- costs"): the maintenance tasks compact, a few accounts at a time, those whose history older
-- than the retention (`serve`/`worker --keep-history`) is worth it.
--
-- account_heads.compaction_due_at  when the account next has enough history past the retention
--                                  to be worth compacting (the recorded time of the
--                                  CompactionSchedule.minimumEvents-th event past its horizon,
--                                  plus the retention); NULL: not looked at yet. Written by the
--                                  maintenance tasks only, under the head's lock; a push never
--                                  writes it, so its index leaves the push's updates of the head
--                                  heap-only (HOT) as before.
-- account_heads.compactions, .compacted_events, .compacted_bytes
--                                  how many compactions the account had (automatic or by hand)
--                                  and how many events and bytes (pg_column_size) they removed:
--                                  `admin projections status` sums them.
ALTER TABLE account_heads ADD COLUMN compaction_due_at timestamptz;
ALTER TABLE account_heads ADD COLUMN compactions bigint NOT NULL DEFAULT 0;
ALTER TABLE account_heads ADD COLUMN compacted_events bigint NOT NULL DEFAULT 0;
ALTER TABLE account_heads ADD COLUMN compacted_bytes bigint NOT NULL DEFAULT 0;
-- The queue's read: the accounts due soonest (NULL, never looked at, first).
CREATE INDEX account_heads_compaction_due ON account_heads (compaction_due_at NULLS FIRST);
