-- Schema version 10: when the exit webhook may try an exit again after a failed delivery (ms).
-- Kept apart from lease_until, which hides an exit from every reader: the webhook's backoff
-- hides it from the webhook alone.

ALTER TABLE exits ADD COLUMN webhook_after INTEGER NOT NULL DEFAULT 0;
