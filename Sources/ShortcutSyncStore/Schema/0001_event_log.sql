-- The event log: every donation, phrase assignment and deletion a device pushed, append-only.
--
-- position     the event's place in the global log, assigned by PostgreSQL.
-- tx_id        the id of the transaction that appended it. Positions are handed out before
--              commit, so they commit out of order; a reader orders by (tx_id, position) and reads
--              only below pg_snapshot_xmin(pg_current_snapshot()), where nothing can still commit.
-- stream_version  the event's place in its account's stream: the expected-version check is
--              this unique index, so two concurrent appends to one account cannot both win.
CREATE TABLE events (
    position        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx_id           xid8 NOT NULL DEFAULT pg_current_xact_id(),
    account_id      uuid NOT NULL,
    stream_version  bigint NOT NULL,
    device_id       uuid NOT NULL,
    seq             bigint NOT NULL,
    event_id        uuid NOT NULL,
    type            text NOT NULL,
    hlc_wall        bigint NOT NULL,
    hlc_counter     bigint NOT NULL,
    body            jsonb NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT events_stream_version_key UNIQUE (account_id, stream_version),
    CONSTRAINT events_device_seq_key UNIQUE (account_id, device_id, seq),
    CONSTRAINT events_event_id_key UNIQUE (account_id, event_id),
    CONSTRAINT events_seq_positive CHECK (seq > 0),
    CONSTRAINT events_stream_version_positive CHECK (stream_version > 0),
    CONSTRAINT events_type_known CHECK (type IN ('donation', 'deletion', 'voiceShortcutAdded',
        'voiceShortcutUpdated', 'voiceShortcutDeleted', 'appsReported'))
);

CREATE INDEX events_log_order ON events (tx_id, position);

-- Append-only: updates are refused, and deletes unless a session erasing an account says so
-- with SET LOCAL shortcut_sync.erasure = 'on'.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('shortcut_sync.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the events table is append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
