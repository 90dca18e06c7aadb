-- Schema version 1: executions, their event journal, artifacts, and the exits feed.
-- Times are integers: milliseconds since the Unix epoch (UTC).

CREATE TABLE executions (
    id                TEXT PRIMARY KEY,           -- ex_ + ULID: sortable by creation time
    kind              TEXT NOT NULL CHECK (kind IN ('workbench_bash', 'workbench_code')),
    principal         TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'cancel_requested',
                                                      'completed', 'failed', 'cancelled', 'timed_out')),
    command           TEXT,
    language          TEXT,
    code              TEXT,
    cwd               TEXT NOT NULL,
    image             TEXT NOT NULL,
    env_json          TEXT NOT NULL DEFAULT '{}',
    stdin             TEXT,
    metadata_json     TEXT,
    idempotency_key   TEXT,
    request_hash      TEXT,
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    finished_at       INTEGER,
    deadline_at       INTEGER NOT NULL,
    timeout_ms        INTEGER NOT NULL,
    idle_timeout_ms   INTEGER,
    exit_code         INTEGER,
    signal            TEXT,
    error_code        TEXT,
    error_message     TEXT,
    cancel_reason     TEXT,
    budget_bytes      INTEGER NOT NULL,
    stdout_bytes      INTEGER NOT NULL DEFAULT 0,   -- bytes the process wrote (so far)
    stderr_bytes      INTEGER NOT NULL DEFAULT 0,
    event_bytes       INTEGER NOT NULL DEFAULT 0,   -- raw bytes that went into output events
    truncated         INTEGER NOT NULL DEFAULT 0,
    stdout_offset     INTEGER NOT NULL DEFAULT 0,   -- spool offsets reached by committed events
    stderr_offset     INTEGER NOT NULL DEFAULT 0,
    stdout_invalid    INTEGER NOT NULL DEFAULT 0,   -- the stream held bytes that are not UTF-8
    stderr_invalid    INTEGER NOT NULL DEFAULT 0,
    progress_offset   INTEGER NOT NULL DEFAULT 0,
    last_sequence     INTEGER NOT NULL DEFAULT 0,
    detached          INTEGER NOT NULL DEFAULT 0,
    containment       TEXT,
    child_json        TEXT                          -- how to find the tree again after a restart
);

CREATE UNIQUE INDEX executions_idempotency ON executions (principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX executions_principal ON executions (principal, id);
CREATE INDEX executions_live ON executions (status) WHERE status IN ('queued', 'running', 'cancel_requested');

CREATE TABLE events (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    sequence      INTEGER NOT NULL,
    event_type    TEXT NOT NULL,
    body          TEXT NOT NULL,                    -- the event's JSON, exactly as served
    PRIMARY KEY (execution_id, sequence)
) WITHOUT ROWID;

CREATE TABLE artifacts (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    size_bytes    INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (execution_id, name)
) WITHOUT ROWID;

-- The exits feed: one row per detached execution's outcome, saved with its terminal status.
-- Not tied to executions by a foreign key: deleting the execution must not drop an unacked exit.
CREATE TABLE exits (
    delivery_id   TEXT PRIMARY KEY,                 -- dl_ + ULID, never reused
    execution_id  TEXT NOT NULL,
    principal     TEXT NOT NULL,
    body          TEXT NOT NULL,                    -- the exit's JSON without `attempt`
    attempt       INTEGER NOT NULL DEFAULT 0,       -- how many times it was handed out
    lease_until   INTEGER NOT NULL DEFAULT 0,       -- hidden until then (ms)
    acked_at      INTEGER,
    created_at    INTEGER NOT NULL
);

CREATE INDEX exits_pending ON exits (principal, lease_until) WHERE acked_at IS NULL;
