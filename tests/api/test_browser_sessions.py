"""A browser's session and what it opened: a logout ends the streams that session opened (not
another session's), and two daemons on one host keep a cookie each (a cookie's name is the
daemon's own: browsers keep cookies by host, whatever the port)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import trio

from tests import ceilings
from tests.api.test_browsers import CSRF, login
from tests.conftest import TOKEN, DaemonHandle
from tests.sse import frames

#: How soon after the logout its streams must have ended (a stream's quiet keep-alive is 15 s).
ENDED_S = 4


class _Streams:
    """What the streams read, by name; `changed` is set at each frame and end."""

    def __init__(self) -> None:
        self.events: dict[str, list[str]] = {}
        self.ended: set[str] = set()
        self.changed = trio.Event()

    async def read(self, response: httpx.Response, name: str) -> None:
        self.events[name] = []
        async for frame in frames(response):
            self.events[name].append(frame.event)
            self._wake()
        self.ended.add(name)
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    async def until(self, what: str, seconds: float, condition: Callable[[], bool]) -> None:
        with ceilings.within(seconds, what):
            while not condition():
                await self.changed.wait()


async def test_logout_ends_the_streams_of_its_session(wb: DaemonHandle, tmp_path: Path) -> None:
    browser, session = await login(wb)
    other, _ = await login(wb)
    started = await wb.start("while [ ! -e stop ]; do sleep 0.02; done", cwd=str(tmp_path))
    eid = started["executionId"]
    streams = _Streams()
    seen = streams.events
    try:
        async with (
            contextlib.aclosing(browser),
            contextlib.aclosing(other),
            browser.stream("GET", "/v1/events/stream") as changes,
            browser.stream("GET", f"/v1/executions/{eid}/events/stream") as events,
            other.stream("GET", "/v1/events/stream") as others,
            trio.open_nursery() as nursery,
        ):
            assert changes.status_code == events.status_code == others.status_code == 200
            nursery.start_soon(streams.read, changes, "changes")
            nursery.start_soon(streams.read, events, "events")
            nursery.start_soon(streams.read, others, "other")
            await streams.until(
                "the streams to begin",
                30,
                lambda: (
                    "ready" in seen.get("changes", ())
                    and "status" in seen.get("events", ())
                    and "ready" in seen.get("other", ())
                ),
            )
            out = await browser.post("/v1/logout", headers={CSRF: session["csrfToken"]})
            assert out.status_code == 204, out.text
            await streams.until(
                "the logged-out session's streams to end",
                ENDED_S,
                lambda: {"changes", "events"} <= streams.ended,
            )
            # The other session's stream goes on: it gets the next change.
            await wb.run("true")
            await streams.until(
                "the other session's stream to get the next change", 30, lambda: "created" in seen["other"]
            )
            assert "other" not in streams.ended
            nursery.cancel_scope.cancel()
    finally:
        (tmp_path / "stop").touch()
        await wb.wait(eid)


async def test_logout_ends_the_file_watches_of_its_session(wb: DaemonHandle) -> None:
    """A watch opened with the session's cookie ends with it; one opened with a bearer token goes on."""
    watch = "/v1/sessions/work/files:watch"
    assert (await wb.client.put("/v1/sessions/work/files/seed.txt", content=b"x")).status_code == 201
    browser, session = await login(wb)
    streams = _Streams()
    seen = streams.events
    async with (
        contextlib.aclosing(browser),
        browser.stream("GET", watch) as mine,
        wb.client.stream("GET", watch) as bearer,
        trio.open_nursery() as nursery,
    ):
        assert mine.status_code == bearer.status_code == 200
        nursery.start_soon(streams.read, mine, "mine")
        nursery.start_soon(streams.read, bearer, "bearer")
        # Each begins with its `: watching` comment (an event of its own for `_Streams`).
        await streams.until("the watches to begin", 30, lambda: bool(seen.get("mine") and seen.get("bearer")))
        out = await browser.post("/v1/logout", headers={CSRF: session["csrfToken"]})
        assert out.status_code == 204, out.text
        await streams.until("the logged-out session's watch to end", ENDED_S, lambda: "mine" in streams.ended)
        await wb.client.put("/v1/sessions/work/files/next.txt", content=b"y")
        await streams.until(
            "the bearer's watch to see the next change", 30, lambda: "created" in seen["bearer"]
        )
        assert "bearer" not in streams.ended
        nursery.cancel_scope.cancel()


async def test_two_daemons_on_one_host_keep_a_session_each(make_daemon: Any, tmp_path: Path) -> None:
    first: DaemonHandle = await make_daemon(tmp_path / "one")
    second: DaemonHandle = await make_daemon(tmp_path / "two")
    # One cookie jar for both, as a browser has: cookies do not tell ports apart.
    async with httpx.AsyncClient(timeout=60) as browser:
        for wb in (first, second):
            response = await browser.post(f"{wb.url}/v1/login", json={"token": TOKEN})
            assert response.status_code == 200, response.text
        names = {cookie.name for cookie in browser.cookies.jar}
        assert len(names) == 2 and all(name.startswith("workbench_session") for name in names), names
        for wb in (first, second):
            response = await browser.get(f"{wb.url}/v1/executions")
            assert response.status_code == 200, response.text
