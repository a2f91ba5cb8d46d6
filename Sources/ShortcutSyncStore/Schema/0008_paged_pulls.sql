-- Pulls are paged (DESIGN §5: at most 1,000 items per answer, `more: true` and a cursor to go
-- on). A page reads each table of items in (version, key) order from where the last page
-- stopped (`version` is the account version that last changed the row), so the indexes that
-- found an account's rows changed after a version now also order them by key: the page is a
-- range scan that stops after its rows, never a sort of everything the account changed.
--
-- The rebuild tables keep their own indexes: no pull reads them.
DROP INDEX projection_shortcuts_changes;
CREATE INDEX projection_shortcuts_changes ON projection_shortcuts (account_id, version, bundle_id, identifier);

DROP INDEX projection_voice_shortcuts_changes;
CREATE INDEX projection_voice_shortcuts_changes ON projection_voice_shortcuts (account_id, version, voice_shortcut_id);
