-- Schema version 6: which data dir a node runs on (the random id kept in it). A daemon started
-- with the id of a node that beats within its lease from another data dir is refused.
ALTER TABLE nodes ADD COLUMN data_dir_id TEXT;
