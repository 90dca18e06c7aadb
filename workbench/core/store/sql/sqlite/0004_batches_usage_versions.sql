-- Schema version 4: batches (kind `batch`, status `partial_failed`, items that name their batch),
-- usage, a version that grows with every change of a record, reruns, and the names of secret
-- variables (their values are never stored). SQLite cannot change a CHECK constraint in place:
-- the table is made again, as its documentation says (foreign keys are off during migrations).

CREATE TABLE executions_v4 (
    id                TEXT PRIMARY KEY,
    kind              TEXT NOT NULL CHECK (kind IN ('workbench_bash', 'workbench_code', 'batch')),
    principal         TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'cancel_requested',
                                                      'completed', 'failed', 'cancelled', 'timed_out',
                                                      'partial_failed')),
    command           TEXT,
    language          TEXT,
    code              TEXT,
    cwd               TEXT NOT NULL,                -- '' for a batch
    image             TEXT NOT NULL,                -- '' for a batch
    env_json          TEXT NOT NULL DEFAULT '{}',
    secret_env_names_json TEXT,                     -- the names only: values are never stored
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
    stdout_bytes      INTEGER NOT NULL DEFAULT 0,
    stderr_bytes      INTEGER NOT NULL DEFAULT 0,
    event_bytes       INTEGER NOT NULL DEFAULT 0,
    truncated         INTEGER NOT NULL DEFAULT 0,
    stdout_offset     INTEGER NOT NULL DEFAULT 0,
    stderr_offset     INTEGER NOT NULL DEFAULT 0,
    stdout_invalid    INTEGER NOT NULL DEFAULT 0,
    stderr_invalid    INTEGER NOT NULL DEFAULT 0,
    progress_offset   INTEGER NOT NULL DEFAULT 0,
    last_sequence     INTEGER NOT NULL DEFAULT 0,
    detached          INTEGER NOT NULL DEFAULT 0,
    containment       TEXT,
    child_json        TEXT,
    row_version       INTEGER NOT NULL DEFAULT 1,   -- grows with every change of the row
    rerun_of          TEXT,                         -- the execution this one re-runs
    batch_id          TEXT,                         -- the batch this one is an item of
    concurrency       INTEGER,                      -- a batch's: its items running at once
    fail_fast         INTEGER NOT NULL DEFAULT 0,   -- a batch's
    cpu_user_ms       INTEGER,                      -- usage, once terminal (NULL: not known)
    cpu_system_ms     INTEGER,
    peak_memory_bytes INTEGER,
    preview_bytes     INTEGER NOT NULL DEFAULT 16384,  -- version 3's: the preview asked for
    preview_format    TEXT NOT NULL DEFAULT 'raw' CHECK (preview_format IN ('raw', 'plain')),
    preview_json      TEXT                          -- the final preview, once terminal
);

INSERT INTO executions_v4 (
    id, kind, principal, session_id, status, command, language, code, cwd, image, env_json, stdin,
    metadata_json, idempotency_key, request_hash, created_at, started_at, finished_at, deadline_at,
    timeout_ms, idle_timeout_ms, exit_code, signal, error_code, error_message, cancel_reason,
    budget_bytes, stdout_bytes, stderr_bytes, event_bytes, truncated, stdout_offset, stderr_offset,
    stdout_invalid, stderr_invalid, progress_offset, last_sequence, detached, containment, child_json,
    preview_bytes, preview_format, preview_json
)
SELECT
    id, kind, principal, session_id, status, command, language, code, cwd, image, env_json, stdin,
    metadata_json, idempotency_key, request_hash, created_at, started_at, finished_at, deadline_at,
    timeout_ms, idle_timeout_ms, exit_code, signal, error_code, error_message, cancel_reason,
    budget_bytes, stdout_bytes, stderr_bytes, event_bytes, truncated, stdout_offset, stderr_offset,
    stdout_invalid, stderr_invalid, progress_offset, last_sequence, detached, containment, child_json,
    preview_bytes, preview_format, preview_json
FROM executions;

DROP TABLE executions;

ALTER TABLE executions_v4 RENAME TO executions;

CREATE UNIQUE INDEX executions_idempotency ON executions (principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX executions_principal ON executions (principal, id);
CREATE INDEX executions_live ON executions (status) WHERE status IN ('queued', 'running', 'cancel_requested');
CREATE INDEX executions_batch ON executions (batch_id, id) WHERE batch_id IS NOT NULL;
CREATE INDEX executions_rerun ON executions (rerun_of, id) WHERE rerun_of IS NOT NULL;
