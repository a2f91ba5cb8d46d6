-- Forgetting and pausing what the suggestions learn (issue 34, DESIGN §3): two new event types,
-- pushed by devices, and the rules they make, which decide which donations teach.
--
--   learningForgotten  forget what a scope taught (the account, a device, a shortcut)
--   learningPaused     pause or resume the learning of the account or of a device
--
-- The account's and its devices' rules (forgets, pause histories, signed-out devices) are one
-- small value on the account's row, read by every fold of the account (NULL for an account that
-- never used them). A shortcut's forget is a mark beside the deletion marks (scope 'forget'):
-- an account may forget many shortcuts, and a fold reads only the marks of the shortcuts its
-- batch touches, and only when the account ever forgot one (forgets_shortcuts: a push of an
-- account that never did looks for no such mark).
--
-- NOT VALID, as in 0016: the rows already stored are of the older types.
ALTER TABLE events DROP CONSTRAINT events_type_known;
ALTER TABLE events ADD CONSTRAINT events_type_known CHECK (type IN ('donation', 'deletion', 'voiceShortcutAdded',
    'voiceShortcutUpdated', 'voiceShortcutDeleted', 'appsReported', 'deviceSignedOut', 'learningForgotten', 'learningPaused')) NOT VALID;

ALTER TABLE projection_accounts ADD COLUMN learning bytea, ADD COLUMN forgets_shortcuts boolean NOT NULL DEFAULT false;
ALTER TABLE rebuild.projection_accounts ADD COLUMN learning bytea, ADD COLUMN forgets_shortcuts boolean NOT NULL DEFAULT false;

ALTER TABLE projection_deletion_marks DROP CONSTRAINT projection_deletion_marks_scope_check;
ALTER TABLE projection_deletion_marks ADD CONSTRAINT projection_deletion_marks_scope_check
    CHECK (scope IN ('all', 'identifier', 'group', 'forget'));
ALTER TABLE rebuild.projection_deletion_marks DROP CONSTRAINT projection_deletion_marks_scope_check;
ALTER TABLE rebuild.projection_deletion_marks ADD CONSTRAINT projection_deletion_marks_scope_check
    CHECK (scope IN ('all', 'identifier', 'group', 'forget'));

-- A signed-out device is now one of the rules (a count of the log must leave its donations out):
-- rows folded before lack it, so every account with events is refolded once (0013).
UPDATE account_heads SET refold_pending = true WHERE version > 0;
