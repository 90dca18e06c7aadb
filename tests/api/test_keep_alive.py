"""The connections' keep-alive timer (`api.listen._KeepAlive`) with a short period: an idle
connection closes after the keep-alive period or at once when the server stops, a busy one never
before its answer is done, and a connection whose client left ends its timer without a close."""

from __future__ import annotations

from typing import Any

import trio

from api.listen import _KeepAlive

PERIOD = 0.2


class Group:
    """The part of hypercorn's task group the timer uses."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery

    def spawn(self, func: Any, *args: Any) -> None:
        self.nursery.start_soon(func, *args)


class Terminated:
    """hypercorn's `context.terminated`."""

    def __init__(self) -> None:
        self.event = trio.Event()

    async def wait(self) -> None:
        await self.event.wait()


async def _with_timer(check: Any) -> list[float]:
    closed: list[float] = []
    terminated = Terminated()
    timer = _KeepAlive(PERIOD, terminated)

    async def close() -> None:
        closed.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        await check(timer, Group(nursery), close, terminated)
        await trio.sleep(3 * PERIOD)
        timer.end()
    return closed


async def test_an_idle_connection_closes_after_the_period_and_requests_put_it_off() -> None:
    async def check(timer: _KeepAlive, group: Group, close: Any, _terminated: Terminated) -> None:
        await timer.restart(group, close)  # connected: idle
        await trio.sleep(PERIOD / 2)
        await timer.stop()  # a request
        await trio.sleep(3 * PERIOD)  # a long answer: never closed meanwhile
        await timer.restart(group, close)  # answered: idle again

    began = trio.current_time()
    [closed] = await _with_timer(check)
    # Not while it was answered (a request put it off), and once idle for the period again.
    assert closed - began >= (PERIOD / 2) + 3 * PERIOD + PERIOD


async def test_at_the_servers_stop_an_idle_connection_closes_at_once() -> None:
    async def check(timer: _KeepAlive, group: Group, close: Any, terminated: Terminated) -> None:
        await timer.restart(group, close)
        await trio.sleep(PERIOD / 4)
        terminated.event.set()

    began = trio.current_time()
    [closed] = await _with_timer(check)
    assert PERIOD / 4 <= closed - began < PERIOD


async def test_at_the_servers_stop_a_busy_connection_closes_once_answered() -> None:
    async def check(timer: _KeepAlive, group: Group, close: Any, terminated: Terminated) -> None:
        await timer.restart(group, close)
        await timer.stop()  # a request
        terminated.event.set()
        await trio.sleep(2 * PERIOD)  # still answering: not closed, though the server stops
        answered.append(trio.current_time())
        await timer.restart(group, close)  # answered: closed at once

    answered: list[float] = []
    [closed] = await _with_timer(check)
    assert 0 <= closed - answered[0] < PERIOD


async def test_a_connection_whose_client_left_ends_its_timer_without_a_close() -> None:
    async def check(timer: _KeepAlive, group: Group, close: Any, _terminated: Terminated) -> None:
        await timer.restart(group, close)
        await trio.sleep(PERIOD / 4)
        timer.end()

    assert await _with_timer(check) == []
