-- Schema version 6: the changes feed (API.md v2, "Browsers": `GET /v1/events/stream`).
-- Each execution carries the number of its latest change (created, status, progress, terminal),
-- drawn from one counter that only grows, even when executions are deleted: a reader resumes
-- with `change_seq > N` and gets each execution that changed since, once, as it is now.

ALTER TABLE executions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN change_type TEXT NOT NULL DEFAULT 'created'
    CHECK (change_type IN ('created', 'status', 'progress', 'terminal'));
ALTER TABLE executions ADD COLUMN progress_json TEXT;   -- the latest progress event's JSON
CREATE INDEX executions_changes ON executions (change_seq);
CREATE TABLE change_counter (n INTEGER NOT NULL);
INSERT INTO change_counter (n) VALUES (0);
