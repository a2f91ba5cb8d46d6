-- An APNs token wakes one device: a registration takes the token from whichever device held it
-- before, in this account or another (PushTokenStore.register). Otherwise a token copied from
-- one phone could be registered under any number of devices and accounts, and the service would
-- wake that phone for all of them. The index finds a token's holders without reading every row.
CREATE INDEX push_tokens_token ON push_tokens (token);
