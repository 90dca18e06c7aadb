"""How a run's wait for its stop decides between an exit and its deadline (pure logic: the
supervisor is a stand-in that keeps the real one's contract for `exit_status`)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import trio

import sandbox
from workbench.core.live import Stop
from workbench.core.runner import Run


def _run(exited: trio.Event, status: sandbox.ExitStatus, deadline: float) -> Run:
    """A Run with only what `_wait_stop` reads: its live side, its child and the supervisor."""

    def exit_status(name: str) -> sandbox.ExitStatus | None:
        return status if exited.is_set() else None

    supervisor = SimpleNamespace(exit_status=exit_status)
    run = object.__new__(Run)
    run.live = SimpleNamespace(kick=trio.Event(), stop=None)  # type: ignore[assignment]
    run.ex = SimpleNamespace(supervisor=supervisor)  # type: ignore[assignment]
    run.child = SimpleNamespace(name="leader")  # type: ignore[assignment]
    run.deadline = deadline
    run.claim_lost = run.exit_known = run.idle_fired = False
    run.exit_status = None
    return run


async def test_an_exit_learnt_before_the_deadline_wins_when_the_run_wakes_after_it() -> None:
    """The leader's exit is known at the deadline less a moment, and the loop is busy past the
    deadline before the run's task resumes: the outcome is the exit, not a timeout."""
    exited, status = trio.Event(), sandbox.ExitStatus(exit_code=0, signal=None)
    run = _run(exited, status, trio.current_time() + 0.2)
    outcome: list[Any] = []

    async def wait() -> None:
        outcome.append(await run._wait_stop())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.sleep(0.05)  # it waits for a kick
        exited.set()  # the supervisor's callback, before the deadline
        run._exit_known()
        time.sleep(0.3)  # noqa: ASYNC251 - the loop is held past the deadline before the run resumes
    assert outcome == [Stop.EXITED]
    assert run.exit_status == status


async def test_no_exit_by_the_deadline_is_a_timeout() -> None:
    run = _run(trio.Event(), sandbox.ExitStatus(exit_code=0, signal=None), trio.current_time() + 0.05)
    assert await run._wait_stop() is Stop.TIMEOUT
