"""Many executions at once through one shim, from many trio tasks."""

from __future__ import annotations

import fcntl
import os
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import ExitStatus, Supervisor

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

COUNT = 1000


@pytest.mark.slow
async def test_a_thousand_concurrent_sleeps(sup: Supervisor, kit: Kit) -> None:
    """Nothing is lost: 1,000 concurrent executions all start, run together and report exit 0.

    Each waits for a shared lock on a file that the test holds until all 1,000 have been spawned,
    so they overlap however slowly a loaded machine spawns them (none can end before)."""
    statuses: dict[str, ExitStatus] = {}
    spawned = trio.Event()
    count = 0
    lock = kit.root / "lock"
    held = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o644)

    async def one(i: int) -> None:
        nonlocal count
        name = f"ex_{i:04d}"
        await sup.spawn(kit.spec(name, ["flock", "--shared", str(lock), "true"]))
        count += 1
        if count == COUNT:
            spawned.set()
        statuses[name] = await sup.wait_exited(name)
        await sup.wait_empty(name)
        await sup.release(name)

    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for i in range(COUNT):
                    nursery.start_soon(one, i)
                await spawned.wait()
                assert statuses == {}  # all 1,000 are alive at once, waiting for the lock
                fcntl.flock(held, fcntl.LOCK_UN)
    finally:
        os.close(held)
    assert len(statuses) == COUNT
    assert set(statuses.values()) == {ExitStatus(0, None)}
    assert sup.known() == {}
