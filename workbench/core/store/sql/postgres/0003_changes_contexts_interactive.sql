-- Schema version 3: the changes feed (API.md v2, "Browsers": `GET /v1/events/stream`), code
-- contexts and interactive executions, as SQLite's migrations 6, 7 and 9 add them.
-- Each execution carries the number of its latest change (created, status, progress, terminal),
-- drawn from one counter row that only grows: its row lock orders the commits that take numbers,
-- so a reader resuming with `change_seq > N` never misses a change committed after it read (a
-- SEQUENCE would hand out numbers in the order of asking, not of committing).

ALTER TABLE executions ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN change_type TEXT NOT NULL DEFAULT 'created'
    CHECK (change_type IN ('created', 'status', 'progress', 'terminal'));
ALTER TABLE executions ADD COLUMN progress_json TEXT;
CREATE INDEX executions_changes ON executions (change_seq);
CREATE TABLE change_counter (n BIGINT NOT NULL);
INSERT INTO change_counter (n) VALUES (0);

-- An execution run in a code context names it; its final expression's value and an uncaught
-- exception's traceback are kept with it.
ALTER TABLE executions ADD COLUMN context_id TEXT;
ALTER TABLE executions ADD COLUMN result_json TEXT;
ALTER TABLE executions ADD COLUMN error_traceback TEXT;

-- Interactive executions (SQLite's migration 9): stdin kept open, the terminal's size when it
-- runs on one, whether an end of file closed its stdin, a persistent shell.
ALTER TABLE executions ADD COLUMN open_stdin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN tty_json TEXT;
ALTER TABLE executions ADD COLUMN stdin_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN persist_shell INTEGER NOT NULL DEFAULT 0;
