-- Schema version 3: the preview of the record (API.md v2, "Output in the record").
-- What the start asked for, and the final preview, kept at the end: the spool files it is made
-- from are removed then, unless they are kept as artifacts.

ALTER TABLE executions ADD COLUMN preview_bytes INTEGER NOT NULL DEFAULT 16384;
ALTER TABLE executions ADD COLUMN preview_format TEXT NOT NULL DEFAULT 'raw'
    CHECK (preview_format IN ('raw', 'plain'));
ALTER TABLE executions ADD COLUMN preview_json TEXT;   -- the final preview, once terminal
