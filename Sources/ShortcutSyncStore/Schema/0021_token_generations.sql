-- Which account token signed each device in (issue 56): a leaked account token is rotated
-- (`admin rotate-token`), and the devices someone signed in with it must be found and signed out
-- with it, not only the token. The tokens themselves are stored as hashes and never shown, so
-- each account token has a generation, a number an operator may read and type: 1 for the token
-- the account was made with, one more at every rotation (in the rotation's own statement). A
-- device keeps the generation of the account token that signed it in (`admin devices` shows it;
-- `admin sign-out --signed-in-with N` and `admin rotate-token --sign-out-devices` use it).
--
-- Devices signed in before this migration keep NULL: which token made them is not known (the
-- account's token may have been rotated before), and an operator is told so rather than a guess.
-- Both tables are reference tables on Citus (citus/distribute.sql): a column added here is added
-- on every node.
ALTER TABLE accounts ADD COLUMN token_generation integer NOT NULL DEFAULT 1;
ALTER TABLE devices ADD COLUMN signed_in_with integer;
