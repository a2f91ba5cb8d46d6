-- Background wakes (DESIGN §6): a device's APNs token and the state of its wakes, one row per
-- device that registered a token. Its own table, keyed by account first, not columns of
-- `devices`: `devices` is a Citus reference table (written on every node), and this state
-- changes with every wake and every pull (Schema/citus/distribute.sql).
--
-- token           the APNs device token, in clear (APNs needs it); lower-case hex. Never logged,
--                 never listed whole.
-- registered_at   when the device last registered it: a 410 from APNs drops the token only if
--                 APNs' timestamp is later (the device may have registered it again since).
-- pulled_version  the account version of the device's latest pull: a device at its account's
--                 version needs no wake.
-- woken_version   the account version the device was last woken for: one wake per change.
-- due_at          when a wake is next due (NULL: none): set a few seconds after a change the
--                 device has not pulled, pushed back by the rate limit or a retry's backoff.
-- last_wake_at    when the latest wake was sent (or is being sent); at most one per interval.
-- wake_count      wakes APNs accepted; failures: retryable refusals (429, 5xx) in a row.
CREATE TABLE push_tokens (
    account_id      uuid NOT NULL,
    device_id       uuid NOT NULL,
    service         text NOT NULL DEFAULT 'apns',
    token           text NOT NULL,
    topic           text NOT NULL,
    environment     text NOT NULL,
    registered_at   timestamptz NOT NULL DEFAULT now(),
    pulled_version  bigint NOT NULL DEFAULT 0,
    woken_version   bigint NOT NULL DEFAULT 0,
    due_at          timestamptz,
    last_wake_at    timestamptz,
    wake_count      bigint NOT NULL DEFAULT 0,
    failures        integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, device_id),
    CONSTRAINT push_tokens_service CHECK (service = 'apns'),
    CONSTRAINT push_tokens_environment CHECK (environment IN ('production', 'development')),
    CONSTRAINT push_tokens_token_hex CHECK (token ~ '^[0-9a-f]{64,200}$')
);

-- The wakers' scan: only the devices with a wake due.
CREATE INDEX push_tokens_due ON push_tokens (due_at) WHERE due_at IS NOT NULL;
