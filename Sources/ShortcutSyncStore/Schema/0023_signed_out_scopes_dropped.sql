-- The learning rules keep no scope of a signed-out device any more (issue 56): nothing such a
-- device donated teaches, whatever its forget or its pauses say, and without them the rules hold
-- a scope for a signed-in device at most (bounded by the account's device limit). Rules read back
-- drop them already; the accounts with stored rules are refolded once, so that what is stored is
-- what a rebuild writes, byte for byte (verify compares them).
UPDATE account_heads h SET refold_pending = true
FROM projection_accounts a
WHERE a.account_id = h.account_id AND a.learning IS NOT NULL;
