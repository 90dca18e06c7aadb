-- Schema version 9: interactive executions. open_stdin: stdin stays open for POST .../input;
-- tty_json: the terminal's current size ({"rows": R, "cols": C}) when it runs on one;
-- stdin_closed: an end of file was sent (no more input); persist_shell: it carries a bash
-- session's working directory and exported variables.

ALTER TABLE executions ADD COLUMN open_stdin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN tty_json TEXT;
ALTER TABLE executions ADD COLUMN stdin_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN persist_shell INTEGER NOT NULL DEFAULT 0;
