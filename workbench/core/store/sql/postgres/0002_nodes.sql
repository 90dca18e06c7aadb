-- Schema version 2: nodes. Every daemon on the database is a node with a heartbeat; a queued
-- execution is claimed (node_id set) by a node with a free slot, first in first out, or only by
-- the node it is pinned to (node_pin). A node whose heartbeat is older than its lease is lost.

ALTER TABLE executions ADD COLUMN node_id TEXT;
ALTER TABLE executions ADD COLUMN node_pin TEXT;
ALTER TABLE executions ADD COLUMN cancel_grace_ms BIGINT;

-- The shared queue, in order: what is queued and not claimed yet.
CREATE INDEX executions_unclaimed ON executions (id) WHERE status = 'queued' AND node_id IS NULL;
CREATE INDEX executions_by_node ON executions (node_id, id)
    WHERE status IN ('queued', 'running', 'cancel_requested');

CREATE TABLE nodes (
    node_id       TEXT PRIMARY KEY,
    url           TEXT,                             -- how other nodes reach it (WORKBENCH_NODE_URL)
    lease_ms      BIGINT NOT NULL,                  -- lost once its heartbeat is older than this
    started_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()  -- the database's clock, not the node's
);
