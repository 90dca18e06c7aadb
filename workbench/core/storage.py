"""The storage watcher: measures the disk under the data dir and says when the store may take new
work again.

A disk with less than `WORKBENCH_MIN_FREE_BYTES` free makes the store `full` before SQLite meets
it (so new work is refused while running executions can still be recorded); a commit that fails
makes it `full` or `failed` at once. Either way the store is `ok` again only once the disk has that
room and a probe commit succeeds. It looks every few seconds while all is well (a disk that fills
in between is met by the first commit that fails), and often while it is not, so that the daemon
recovers by itself soon after space is freed.
"""

from __future__ import annotations

from pathlib import Path

import trio

from workbench.core.store import Store
from workbench.core.store.health import free_bytes
from workbench.wire.errors import Unavailable

_EVERY_OK_S = 2.0
_EVERY_DEGRADED_S = 0.25


async def check(store: Store, data_dir: Path, min_free: int) -> None:
    """Measure once and update `store.health` (probing the store when it was not ok)."""
    health = store.health
    free = await trio.to_thread.run_sync(free_bytes, data_dir)
    if free < min_free:
        health.disk_low(
            f"the disk holding the data dir {data_dir} is full ({free} bytes free, less than "
            f"WORKBENCH_MIN_FREE_BYTES={min_free})"
        )
        return
    if health.ok:
        return
    try:
        await store.probe()
    except Unavailable:
        return  # still refused: its failure was reported to `health` again
    health.recovered()


async def watch(store: Store, data_dir: Path, min_free: int) -> None:
    """`check` until cancelled: every few seconds, and soon after any change of the store's health."""
    health = store.health
    while True:
        await check(store, data_dir, min_free)
        with trio.move_on_after(_EVERY_OK_S if health.ok else _EVERY_DEGRADED_S):
            await health.wait_changed()
