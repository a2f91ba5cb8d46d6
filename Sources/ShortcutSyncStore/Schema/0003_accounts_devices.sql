-- Accounts and their devices. Tokens are stored only as SHA-256 hashes; a signed-out device
-- keeps its row (and its events) but loses its token hash, so its token stops working.
CREATE TABLE accounts (
    account_id  uuid PRIMARY KEY,
    token_hash  bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT accounts_token_hash_key UNIQUE (token_hash)
);

CREATE TABLE devices (
    device_id   uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (account_id),
    name        text NOT NULL,
    platform    text NOT NULL,
    token_hash  bytea,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    CONSTRAINT devices_token_hash_key UNIQUE (token_hash),
    CONSTRAINT devices_revoked_without_token CHECK (revoked_at IS NULL OR token_hash IS NULL)
);

CREATE INDEX devices_account ON devices (account_id);
