"""The storage watcher: measures the disk under the data dir and says when the store may take new
work again.

A disk with less than `WORKBENCH_MIN_FREE_BYTES` free makes the store `full` before SQLite meets
it (so new work is refused while running executions can still be recorded); a commit that fails
makes it `full` or `failed` at once. Either way the store is `ok` again only once the disk has that
room and `HEADROOM` more, and a probe commit succeeds. It looks every few seconds while all is well
(a disk that fills in between is met by the first commit that fails), and often while it is not,
so that the daemon recovers by itself soon after space is freed.

A probe is small: it may squeeze into pages SQLite already holds while the journal's next commit
(the output a running execution wrote meanwhile) still does not fit. When the store is full again
soon after it was said `ok`, that room was too little: the next `ok` needs more room than the disk
had then. And the watcher never looks more often than `_EVERY_DEGRADED_S`, whatever wakes it: the
log says the disk is full once, and writable again once, not once per failed commit.
"""

from __future__ import annotations

from pathlib import Path

import trio

from workbench.core.store import Store
from workbench.core.store.health import State, free_bytes
from workbench.wire.errors import Unavailable

_EVERY_OK_S = 2.0
_EVERY_DEGRADED_S = 0.25
#: Room past `WORKBENCH_MIN_FREE_BYTES` a full disk must have again before the store is `ok`.
HEADROOM = 1024 * 1024
#: A store full again within this long of being said `ok` was said `ok` too soon.
_TOO_SOON_S = 10.0


class Room:
    """How much free space a full store needs to be `ok` again, raised by each `ok` said too soon."""

    def __init__(self, min_free: int) -> None:
        self.min_free = min_free
        self.needed = min_free + HEADROOM
        self._said_ok: tuple[float, int] | None = None  # when, and with how many bytes free

    def full_again(self) -> None:
        """The store is not ok: if that came soon after it was said ok, that room was too little."""
        if self._said_ok is not None:
            when, free = self._said_ok
            if trio.current_time() - when < _TOO_SOON_S:
                self.needed = max(self.needed, free + HEADROOM)
            self._said_ok = None

    def ok_for_a_while(self) -> None:
        if self._said_ok is not None and trio.current_time() - self._said_ok[0] >= _TOO_SOON_S:
            self.needed, self._said_ok = self.min_free + HEADROOM, None

    def said_ok(self, free: int) -> None:
        self._said_ok = (trio.current_time(), free)


async def check(store: Store, data_dir: Path, min_free: int, room: Room | None = None) -> None:
    """Measure once and update `store.health` (probing the store when it was not ok)."""
    health = store.health
    room = room if room is not None else Room(min_free)
    free = await trio.to_thread.run_sync(free_bytes, data_dir)
    if free < min_free:
        health.disk_low(
            f"the disk holding the data dir {data_dir} is full ({free} bytes free, less than "
            f"WORKBENCH_MIN_FREE_BYTES={min_free})"
        )
    if health.ok:
        room.ok_for_a_while()
        return
    room.full_again()
    if health.state is State.FULL and free < room.needed:
        return  # not room enough yet: a probe that fits proves nothing about the next commit
    try:
        await store.probe()
    except Unavailable:
        return  # still refused: its failure was reported to `health` again
    health.recovered()
    room.said_ok(free)


async def watch(store: Store, data_dir: Path, min_free: int) -> None:
    """`check` until cancelled: every few seconds, and soon after any change of the store's health
    (but never twice within `_EVERY_DEGRADED_S`)."""
    health = store.health
    room = Room(min_free)
    while True:
        await check(store, data_dir, min_free, room)
        checked = trio.current_time()
        with trio.move_on_after(_EVERY_OK_S if health.ok else _EVERY_DEGRADED_S):
            await health.wait_changed()
        await trio.sleep_until(checked + _EVERY_DEGRADED_S)
