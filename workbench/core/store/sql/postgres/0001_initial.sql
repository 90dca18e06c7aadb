-- Schema version 1 of the PostgreSQL engine: the SQLite engine's schema as of its version 5
-- (executions, their journal, artifacts, the exits feed), in PostgreSQL's types.
-- Times are BIGINT milliseconds since the Unix epoch (UTC); flags are 0/1 integers, as in SQLite,
-- so that both engines read and write the same values.

CREATE TABLE executions (
    id                TEXT PRIMARY KEY,             -- ex_ + ULID: sortable by creation time
    kind              TEXT NOT NULL CHECK (kind IN ('workbench_bash', 'workbench_code', 'batch')),
    principal         TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'cancel_requested',
                                                      'completed', 'failed', 'cancelled', 'timed_out',
                                                      'partial_failed')),
    command           TEXT,
    language          TEXT,
    code              TEXT,
    cwd               TEXT NOT NULL,
    image             TEXT NOT NULL,
    env_json          TEXT NOT NULL DEFAULT '{}',
    secret_env_names_json TEXT,
    stdin             TEXT,
    metadata_json     TEXT,
    idempotency_key   TEXT,
    request_hash      TEXT,
    created_at        BIGINT NOT NULL,
    started_at        BIGINT,
    finished_at       BIGINT,
    deadline_at       BIGINT NOT NULL,
    timeout_ms        BIGINT NOT NULL,
    idle_timeout_ms   BIGINT,
    exit_code         INTEGER,
    signal            TEXT,
    error_code        TEXT,
    error_message     TEXT,
    cancel_reason     TEXT,
    budget_bytes      BIGINT NOT NULL,
    stdout_bytes      BIGINT NOT NULL DEFAULT 0,
    stderr_bytes      BIGINT NOT NULL DEFAULT 0,
    event_bytes       BIGINT NOT NULL DEFAULT 0,
    truncated         INTEGER NOT NULL DEFAULT 0,
    stdout_offset     BIGINT NOT NULL DEFAULT 0,
    stderr_offset     BIGINT NOT NULL DEFAULT 0,
    stdout_invalid    INTEGER NOT NULL DEFAULT 0,
    stderr_invalid    INTEGER NOT NULL DEFAULT 0,
    progress_offset   BIGINT NOT NULL DEFAULT 0,
    last_sequence     BIGINT NOT NULL DEFAULT 0,
    detached          INTEGER NOT NULL DEFAULT 0,
    containment       TEXT,
    child_json        TEXT,
    row_version       BIGINT NOT NULL DEFAULT 1,
    rerun_of          TEXT,
    batch_id          TEXT,
    concurrency       INTEGER,
    fail_fast         INTEGER NOT NULL DEFAULT 0,
    cpu_user_ms       BIGINT,
    cpu_system_ms     BIGINT,
    peak_memory_bytes BIGINT,
    preview_bytes     BIGINT NOT NULL DEFAULT 16384,
    preview_format    TEXT NOT NULL DEFAULT 'raw' CHECK (preview_format IN ('raw', 'plain')),
    preview_json      TEXT,
    service           INTEGER NOT NULL DEFAULT 0,
    readiness_json    TEXT,
    ready_timeout_ms  BIGINT,
    ready_at          BIGINT
);

CREATE UNIQUE INDEX executions_idempotency ON executions (principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX executions_principal ON executions (principal, id);
CREATE INDEX executions_live ON executions (status) WHERE status IN ('queued', 'running', 'cancel_requested');
CREATE INDEX executions_batch ON executions (batch_id, id) WHERE batch_id IS NOT NULL;
CREATE INDEX executions_rerun ON executions (rerun_of, id) WHERE rerun_of IS NOT NULL;
CREATE INDEX executions_services ON executions (principal, id) WHERE service = 1;

CREATE TABLE events (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    sequence      BIGINT NOT NULL,
    event_type    TEXT NOT NULL,
    body          TEXT NOT NULL,                    -- the event's JSON, as served (delta aside)
    data          BYTEA,                            -- an output event's delta, as bytes
    PRIMARY KEY (execution_id, sequence)
);

CREATE TABLE artifacts (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (execution_id, name)
);

-- The exits feed. Not tied to executions by a foreign key: deleting the execution must not drop
-- an unacked exit.
CREATE TABLE exits (
    delivery_id   TEXT PRIMARY KEY,
    execution_id  TEXT NOT NULL,
    principal     TEXT NOT NULL,
    body          TEXT NOT NULL,
    attempt       INTEGER NOT NULL DEFAULT 0,
    lease_until   BIGINT NOT NULL DEFAULT 0,
    acked_at      BIGINT,
    created_at    BIGINT NOT NULL
);

CREATE INDEX exits_pending ON exits (principal, lease_until) WHERE acked_at IS NULL;
