"""Identifiers: `ex_` / `dl_` + a 26-character ULID, sortable by creation time, never reused."""

from __future__ import annotations

import os
import threading
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = 0
_last_random = 0


def ulid(now_ms: int | None = None) -> str:
    """A new ULID. Within one millisecond the random part increases, so ids stay in creation order."""
    global _last_ms, _last_random
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        if ms <= _last_ms:
            # Same (or an earlier, after a clock step) millisecond: keep order by counting up.
            ms = _last_ms
            rand = _last_random + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave room to count up
        _last_ms, _last_random = ms, rand
    value = (ms << 80) | (rand & ((1 << 80) - 1))
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_execution_id() -> str:
    return "ex_" + ulid()


def new_delivery_id() -> str:
    return "dl_" + ulid()
