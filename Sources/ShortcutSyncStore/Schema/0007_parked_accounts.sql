-- One account's data can never stop the worker for the others (DESIGN §6).
--
-- projection_parked_accounts  accounts whose events could not be folded (a batch failed twice at
--                        the same place, and folding this account alone failed). The worker skips
--                        their events, says so in /readyz and /metrics, and tries again to fold each
--                        from its whole log, with a growing pause (retry_at); once that works the
--                        account is live again.
-- projection_accounts.reset_version  a cursor made before this version gets the whole view: the
--                        account's rows were written anew (its tombstones are gone).
CREATE TABLE projection_parked_accounts (
    account_id      uuid PRIMARY KEY,
    first_position  bigint NOT NULL,
    error           text NOT NULL,
    attempts        integer NOT NULL DEFAULT 1,
    parked_at       timestamptz NOT NULL DEFAULT now(),
    retry_at        timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE projection_accounts ADD COLUMN reset_version bigint NOT NULL DEFAULT 0;
ALTER TABLE rebuild.projection_accounts ADD COLUMN reset_version bigint NOT NULL DEFAULT 0;
