"""`workbench mcp` across a restart of its daemon: a tool call waiting on a run goes on waiting
after it, and a run that outlives the wait is handed to the exits feed, as without a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.cli.test_mcp import call, data, session, text
from tests.reliability.conftest import DaemonProcess

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


async def started(daemon: DaemonProcess) -> None:
    """Once the daemon has a run."""
    for _ in range(600):
        if daemon.client.get("/v1/executions").json()["executions"]:
            return
        await trio.sleep(0.05)
    raise AssertionError("no run started")


async def restarted_while_it_waits(
    tmp_path: Path, command: str, wait_s: float, exits: bool = False
) -> tuple[Any, Any]:
    """A `bash` call of `command` waiting `wait_s`, its daemon stopped (its runs kept) and started
    again meanwhile: (the call's answer, and with `exits` the `exits` tool's answer after it)."""
    daemon = DaemonProcess(tmp_path / "data", WORKBENCH_SHUTDOWN_MODE="keep")
    daemon.start()
    try:
        async with session(daemon.url, tmp_path) as client:
            answers: dict[str, Any] = {}

            async def waits() -> None:
                answers["call"] = await call(client, "bash", command=command, waitSeconds=wait_s)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(waits)
                with ceilings.within(30, "the call's run to start"):
                    await started(daemon)
                await trio.to_thread.run_sync(daemon.stop)
                daemon.env["WORKBENCH_SHUTDOWN_MODE"] = "kill"  # the test's end stops everything
                await trio.to_thread.run_sync(daemon.start)
            if exits:
                answers["exits"] = await call(client, "exits", waitSeconds=20)
            return answers["call"], answers.get("exits")
    finally:
        daemon.close()


@pytest.mark.timeout(150)
async def test_a_wait_cut_short_by_a_restart_waits_on_after_it(tmp_path: Path) -> None:
    """The run ends within the wait: the call answers its end (it answered "still running after
    60 s" at the restart, 2 s in)."""
    answer, _ = await restarted_while_it_waits(tmp_path, "sleep 4; echo done", 60)
    assert data(answer)["status"] == "completed" and "done" in data(answer)["stdout"], text(answer)


@pytest.mark.timeout(150)
async def test_a_run_that_outlives_a_wait_cut_short_by_a_restart_goes_to_the_exits_feed(
    tmp_path: Path,
) -> None:
    """The run outlives the wait: the call says so after the whole wait, and its outcome comes from
    the exits tool (it was not handed over, and never came)."""
    answer, handed = await restarted_while_it_waits(tmp_path, "sleep 9; echo late", 5, exits=True)
    assert data(answer)["running"] and data(answer)["detached"], text(answer)
    assert "exits tool" in text(answer) and "after 5 s" in text(answer), text(answer)
    assert data(answer)["executionId"] in text(handed) and "completed" in text(handed), text(handed)
