"""Identifiers: `ex_` / `cx_` / `dl_` + a 26-character ULID, sortable by creation time, never reused."""

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
    # Two characters (10 bits) per lookup: a batch of 1000 items makes 1001 ids at once.
    return "".join(_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS)


#: Every pair of Crockford characters by its 10-bit value, and the shifts of the 13 pairs of a
#: ULID (130 bits: its two leading bits are always zero).
_PAIRS = [a + b for a in "0123456789ABCDEFGHJKMNPQRSTVWXYZ" for b in "0123456789ABCDEFGHJKMNPQRSTVWXYZ"]
_SHIFTS = tuple(range(120, -1, -10))


def created_ms(identifier: str) -> int | None:
    """When an id of `ulid` was made (ms since the epoch, from its first 10 characters after the
    prefix), or None when it is not one."""
    prefix, _, value = identifier.partition("_")
    if len(prefix) != 2 or len(value) != 26:
        return None
    ms = 0
    for char in value[:10]:
        digit = _CROCKFORD.find(char)
        if digit < 0:
            return None
        ms = ms * 32 + digit
    return ms


def new_execution_id() -> str:
    return "ex_" + ulid()


def new_context_id() -> str:
    return "cx_" + ulid()


def new_delivery_id() -> str:
    return "dl_" + ulid()
