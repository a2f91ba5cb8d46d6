-- A device's sign-out is an event of the log (`deviceSignedOut`, written by the service, never
-- pushed): its fold takes what the device taught the suggestions out of every donation group, so
-- that a rebuild from the log forgets it too (DESIGN §3). The service gives it the greatest seq
-- there is (2^53), so no event of the device can follow it.
--
-- NOT VALID: the rows already stored are of the six older types, which the new check admits too;
-- PostgreSQL then need not read the whole log to add it. New rows are checked.
ALTER TABLE events DROP CONSTRAINT events_type_known;
ALTER TABLE events ADD CONSTRAINT events_type_known CHECK (type IN ('donation', 'deletion', 'voiceShortcutAdded',
    'voiceShortcutUpdated', 'voiceShortcutDeleted', 'appsReported', 'deviceSignedOut')) NOT VALID;
