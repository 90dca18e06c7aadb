"""Many executions at once through one shim, from many trio tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import ExitStatus, Supervisor

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

COUNT = 1000


@pytest.mark.slow
async def test_a_thousand_concurrent_sleeps(sup: Supervisor, kit: Kit) -> None:
    """Nothing is lost: 1,000 concurrent executions all start, run together and report exit 0."""
    statuses: dict[str, ExitStatus] = {}
    running = 0
    most_running = 0

    async def one(i: int) -> None:
        nonlocal running, most_running
        name = f"ex_{i:04d}"
        await sup.spawn(kit.spec(name, ["sleep", "2"]))
        running += 1
        most_running = max(most_running, running)
        statuses[name] = await sup.wait_exited(name)
        running -= 1
        await sup.wait_empty(name)
        await sup.release(name)

    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            for i in range(COUNT):
                nursery.start_soon(one, i)
    assert len(statuses) == COUNT
    assert set(statuses.values()) == {ExitStatus(0, None)}
    assert most_running > COUNT // 2  # they really overlapped
    assert sup.known() == {}
