-- Schema version 5: services. A service is a bash execution meant to stay up (no default deadline:
-- timeout_ms 0 with deadline_at at the end of time); readiness_json says when it is ready
-- ({"port": N} or {"logPattern": "..."}), ready_at when it became so.

ALTER TABLE executions ADD COLUMN service INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN readiness_json TEXT;
ALTER TABLE executions ADD COLUMN ready_timeout_ms INTEGER;
ALTER TABLE executions ADD COLUMN ready_at INTEGER;
CREATE INDEX executions_services ON executions (principal, id) WHERE service = 1;
