-- Schema version 4: the store's identity. One row, a random id made once: each node's data dir
-- notes the store it was used with (`<data>/store`), and a start on another store is refused.

CREATE TABLE workbench_store (id TEXT NOT NULL);
INSERT INTO workbench_store (id) VALUES (md5(random()::text || clock_timestamp()::text));
