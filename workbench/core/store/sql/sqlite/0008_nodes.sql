-- Schema version 8: nodes (API.md v2, "Many daemons, one journal"). The node that runs an
-- execution, the node a start was pinned to, and the grace of a cancel asked for on a node that
-- does not run the execution (the owner reads it). SQLite serves one node: node_id is set at once.

ALTER TABLE executions ADD COLUMN node_id TEXT;
ALTER TABLE executions ADD COLUMN node_pin TEXT;
ALTER TABLE executions ADD COLUMN cancel_grace_ms INTEGER;
