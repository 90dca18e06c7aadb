"""`files:watch`: the changes under a directory as server-sent events, from inotify."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from tests.sse import Frame, frames, keepalive_after_quiet

FILES = "/v1/sessions/work/files"


async def changes(
    wb: DaemonHandle, until: Any, path: str = "", ready: trio.Event | None = None
) -> list[dict[str, Any]]:
    """The events of a watch of `path` until `until(events)` holds."""
    seen: list[dict[str, Any]] = []
    async with wb.client.stream("GET", f"{FILES}:watch", params={"path": path}) as response:
        assert response.status_code == 200, await response.aread()
        stream: AsyncIterator[Frame] = frames(response)
        async for frame in stream:
            if frame.comment == "watching" and ready is not None:
                ready.set()
            if frame.comment is None:
                event = frame.json
                assert frame.event == event["type"] and frame.id is None
                seen.append(event)
                if until(seen):
                    return seen
    return seen


def has(events: list[dict[str, Any]], kind: str, path: str) -> bool:
    return any((e["type"], e["path"]) == (kind, path) for e in events)


async def test_created_modified_and_deleted_as_they_happen(wb: DaemonHandle) -> None:
    assert (await wb.client.put(f"{FILES}/seed.txt", content=b"seed")).status_code == 201
    ready = trio.Event()
    got: list[dict[str, Any]] = []

    def done(events: list[dict[str, Any]]) -> bool:
        return has(events, "deleted", "seed.txt") and has(events, "created", "d/e/f.txt")

    async def watch() -> None:
        got.extend(await changes(wb, done, ready=ready))

    with ceilings.within(30, "the watch to see every change"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await ready.wait()
            await wb.client.put(f"{FILES}/api.txt", content=b"one")
            await wb.run(
                "echo a >> log.txt; echo b >> log.txt; mkdir -p d/e && echo f > d/e/f.txt", sessionId="work"
            )
            await wb.client.delete(f"{FILES}/seed.txt")
    assert has(got, "created", "api.txt") and has(got, "created", "log.txt")
    assert has(got, "modified", "log.txt")
    assert has(got, "created", "d") and next(e for e in got if e["path"] == "d")["directory"] is True
    assert not any(".workbench-" in e["path"] for e in got)  # a write's temporary file is not shown


async def test_a_watch_of_a_subdirectory_sees_only_it(wb: DaemonHandle) -> None:
    await wb.client.put(f"{FILES}/in/keep.txt", content=b"k")
    ready = trio.Event()
    got: list[dict[str, Any]] = []

    async def watch() -> None:
        got.extend(await changes(wb, lambda events: has(events, "created", "in/x.txt"), "in", ready))

    with ceilings.within(30, "the watch of a subdirectory"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await ready.wait()
            await wb.client.put(f"{FILES}/out.txt", content=b"o")
            await wb.client.put(f"{FILES}/in/x.txt", content=b"x")
    assert [e["path"] for e in got] == ["in/x.txt"]


async def test_a_watch_ends_after_its_timeout_and_when_its_directory_goes(wb: DaemonHandle) -> None:
    await wb.client.put(f"{FILES}/gone/x", content=b"x")
    with ceilings.within(30, "a watch with timeoutMs to end"):
        response = await wb.client.get(f"{FILES}:watch", params={"timeoutMs": 200})
    assert response.status_code == 200 and response.text == ": watching\n\n"
    ready = trio.Event()
    got: list[dict[str, Any]] = []

    async def watch() -> None:
        got.extend(await changes(wb, lambda events: False, "gone", ready))

    with ceilings.within(30, "a watch to end with its directory"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await ready.wait()
            await wb.client.delete(f"{FILES}/gone")
    assert has(got, "deleted", "gone")
    assert (await wb.client.get(f"{FILES}:watch", params={"path": "nope"})).status_code == 404
    assert (await wb.client.get(f"{FILES}:watch", params={"path": "gone"})).status_code == 404


async def test_a_name_that_is_not_utf8_is_watched_with_u_fffd(wb: DaemonHandle) -> None:
    """A file an execution names with bytes that are not UTF-8: the watch says so, as the
    listing does (U+FFFD for each bad byte), instead of failing."""
    assert (await wb.client.put(f"{FILES}/seed.txt", content=b"seed")).status_code == 201
    ready = trio.Event()
    got: list[dict[str, Any]] = []

    async def watch() -> None:
        got.extend(await changes(wb, lambda events: has(events, "created", "after"), ready=ready))

    with ceilings.within(30, "the watch to see both files"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await ready.wait()
            await wb.run("touch $'bad\\xff'; touch after", sessionId="work")
    assert has(got, "created", "bad\ufffd"), got


async def test_a_quiet_watch_gets_a_keepalive_and_goes_on(wb: DaemonHandle) -> None:
    """A `: keepalive` comment after 15 s without a change, and the watch then goes on."""
    assert (await wb.client.put(f"{FILES}/seed.txt", content=b"seed")).status_code == 201

    async def change() -> None:
        assert (await wb.client.put(f"{FILES}/after.txt", content=b"x")).status_code == 201

    with ceilings.within(45, "a keep-alive, then the next change"):
        async with wb.client.stream("GET", f"{FILES}:watch") as response:
            quiet_s = await keepalive_after_quiet(
                response,
                lambda frame: frame.comment == "watching",
                change,
                lambda frame: (frame.json["type"], frame.json["path"]) == ("created", "after.txt"),
            )
    assert quiet_s >= 14  # not before 15 s of quiet
