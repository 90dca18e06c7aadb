-- Schema version 2: an output event's delta is stored as bytes beside its JSON body (which holds
-- "outputDelta": null in its place) and put back when the event is read. Events of version 1
-- keep their delta inside the body, with `data` NULL, and read as before.

ALTER TABLE events ADD COLUMN data BLOB;
