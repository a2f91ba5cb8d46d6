-- Keys the service keeps for itself, made by the database when the schema is first applied, so
-- that every server instance of one database shares them.
--
-- cursor_signing  the HMAC key that makes a pull cursor unforgeable: a cursor carries the account
--                 and device it was issued to, and one that was not made by the service, or was
--                 changed, is unknown. 256 bits from gen_random_uuid() (a strong random source;
--                 two UUIDs give 244 random bits).
CREATE TABLE service_secrets (
    name    text PRIMARY KEY,
    secret  bytea NOT NULL
);

INSERT INTO service_secrets (name, secret)
VALUES ('cursor_signing', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
