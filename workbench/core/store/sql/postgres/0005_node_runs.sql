-- Schema version 5: since when a node has beaten its heart without a gap. A node takes another
-- for lost only once it has itself beaten without a gap for that node's lease: after the
-- database was away (or this node was), every living node first gets a lease to beat again.
ALTER TABLE nodes ADD COLUMN beating_since TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp();
