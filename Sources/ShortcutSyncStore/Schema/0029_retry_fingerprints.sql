-- A retry stays a retry for ever (DESIGN §4; issue 65, item 3): what recognises an event a device
-- sends again is its (seq, id), and a compaction removes the events themselves. Before it removes
-- a device's events, it keeps here a fingerprint of each one's id, by seq, so that the device's
-- events compacted away are still told from new ones: the same seq with the same id is a retry
-- (nothing stored), with another id a reuse (409).
--
-- fingerprints  two bytes a seq, the seqs first_seq, first_seq + 1, …: the first two bytes of
--               SHA-256 of the event id's 16 bytes (sha256(uuid_send(event_id))). A retry's id
--               always matches; a seq sent again with another id matches by chance one time in
--               65,536 (and then every other event of its batch sent below the device's last seq
--               must match too). Two bytes a seq is what DESIGN §8's bound leaves room for: of
--               30,000 donations in 500-event pushes, compacted, 60,408 bytes of rows here, where
--               the log kept 618,000 bytes of events (each device's last push whole) before.
--               A row holds at most 8,192 seqs (16 KiB), so a compaction rewrites little of it.
-- A device's last event stays in the log (it gives the device's last seq, which the push reads
-- there); every other event a compaction removes has its fingerprint here first. Rows are written
-- by compactions and imports, under the account head's lock, and removed with the account.
CREATE TABLE retry_fingerprints (
    account_id   uuid NOT NULL,
    device_id    uuid NOT NULL,
    first_seq    bigint NOT NULL CHECK (first_seq >= 1),
    fingerprints bytea NOT NULL CHECK (length(fingerprints) BETWEEN 2 AND 16384 AND length(fingerprints) % 2 = 0),
    PRIMARY KEY (account_id, device_id, first_seq)
);
