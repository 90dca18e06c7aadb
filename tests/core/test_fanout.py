"""`SharedPages`: followers at one cursor share one read, and never get less than their own read."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from workbench.core.fanout import SharedPages


def _encode(value: str) -> bytes:
    return value.encode()


async def test_followers_at_one_version_share_one_read_and_a_newer_one_reads_again() -> None:
    """Events are a journal (2): a follower that knows of a newer commit gets a read made after it."""
    pages: SharedPages[str] = SharedPages()
    gate = trio.Event()
    reads = []

    async def read() -> str:
        reads.append(1)
        await gate.wait()
        return f"page {len(reads)}"

    got: list[tuple[str, bytes]] = []

    async def follower(seen: int) -> None:
        got.append(await pages.page("ex", seen, ("cursor", 5), read, _encode))

    with pages.follow("ex"):
        async with trio.open_nursery() as nursery:
            for _ in range(50):
                nursery.start_soon(follower, 3)
            await trio.testing.wait_all_tasks_blocked()
            gate.set()
        assert len(reads) == 1 and got == [("page 1", b"page 1")] * 50
        assert got[0][1] is got[-1][1], "one encoding, shared"
        assert pages.shared == 49 and pages.reads == 1
        # Done and still current: an older or equal version takes it; a newer one reads.
        assert await pages.page("ex", 2, ("cursor", 5), read, _encode) == ("page 1", b"page 1")
        assert await pages.page("ex", 4, ("cursor", 5), read, _encode) == ("page 2", b"page 2")
        assert await pages.page("ex", 4, ("cursor", 6), read, _encode) == ("page 3", b"page 3")
    assert pages._pages == {} and pages._users == {}


class _Reads:
    """Reads of a page that note their calls: one that gives `value`, one that fails as the store
    would, and one that never ends."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.calls: list[str] = []

    async def fine(self) -> str:
        self.calls.append("fine")
        return self.value

    async def broken(self) -> str:
        self.calls.append("broken")
        raise OSError("store")

    async def stuck(self) -> str:
        self.calls.append("stuck")
        await trio.sleep_forever()
        raise AssertionError


async def test_a_leader_that_is_cancelled_or_fails_leaves_its_followers_to_read() -> None:
    """Connections are not runs (5): one follower's going away costs the others nothing."""
    pages: SharedPages[str] = SharedPages()
    reads = _Reads("ok")
    fine, broken, stuck, calls = reads.fine, reads.broken, reads.stuck, reads.calls
    with pages.follow("ex"):
        async with trio.open_nursery() as nursery:
            leader = trio.CancelScope()

            async def lead() -> None:
                with leader:
                    await pages.page("ex", 1, "k", stuck, _encode)

            nursery.start_soon(lead)
            await trio.testing.wait_all_tasks_blocked()
            result: list[tuple[str, bytes]] = []

            async def follow() -> None:
                result.append(await pages.page("ex", 1, "k", fine, _encode))

            nursery.start_soon(follow)
            await trio.testing.wait_all_tasks_blocked()
            leader.cancel()
        assert result == [("ok", b"ok")] and calls == ["stuck", "fine"]
        with pytest.raises(OSError):
            await pages.page("ex", 7, "k", broken, _encode)
        assert await pages.page("ex", 7, "k", fine, _encode) == ("ok", b"ok")


class _Version:
    """A watch's version, moved by the test; counts the streams that waited on it."""

    def __init__(self) -> None:
        self.value = 0
        self.waits = 0
        self._moved = trio.Event()

    def move(self, by: int = 1) -> None:
        self.value += by
        self._moved.set()
        self._moved = trio.Event()

    async def changed(self, seen: int) -> int | None:
        self.waits += 1
        while self.value == seen:
            await self._moved.wait()
        return self.value if self.value > 0 else None  # a negative move stands for a tick


async def test_followers_waiting_at_one_cursor_wake_once_with_the_page_one_of_them_read() -> None:
    """One commit wakes one reader: the others get its page without a read or a wait of their own."""
    pages: SharedPages[str] = SharedPages()
    version = _Version()
    reads: list[int] = []

    async def read() -> str:
        reads.append(version.value)
        return f"after {version.value}"

    got: list[tuple[int, tuple[str, bytes]] | None] = []

    async def follower() -> None:
        got.append(await pages.next_page("ex", 0, lambda: version.changed(0), ("cursor", 3), read, _encode))

    with pages.follow("ex"):
        async with trio.open_nursery() as nursery:
            for _ in range(50):
                nursery.start_soon(follower)
            await trio.testing.wait_all_tasks_blocked()
            assert version.waits == 1 and reads == [] and got == []
            version.move()
        assert reads == [1] and got == [(1, ("after 1", b"after 1"))] * 50
        assert pages.reads == 1 and pages.shared == 49
        # A follower that comes later at the same cursor and version takes the page made for it.
        assert await pages.page("ex", 1, ("cursor", 3), read, _encode) == ("after 1", b"after 1")
        assert reads == [1]
        assert pages._next == {"ex": {}}
    assert pages._next == {} and pages._pages == {}


async def test_a_tick_wakes_every_waiting_follower_with_nothing_to_read() -> None:
    pages: SharedPages[str] = SharedPages()
    version = _Version()

    async def read() -> str:
        raise AssertionError("nothing moved: no read")

    got: list[object] = []

    async def follower() -> None:
        got.append(await pages.next_page("ex", 0, lambda: version.changed(0), "k", read, _encode))

    with pages.follow("ex"):
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(follower)
            await trio.testing.wait_all_tasks_blocked()
            version.move(-1)
    assert got == [None] * 5 and version.waits == 1


async def test_followers_go_on_when_the_one_reading_for_them_goes_away_or_fails() -> None:
    """Connections are not runs (5): the follower that leads the wait may leave or fail; the
    others still get the next page, read by one of them."""
    pages: SharedPages[str] = SharedPages()
    version = _Version()
    reads = _Reads("page")
    fine, broken, calls = reads.fine, reads.broken, reads.calls
    got: list[object] = []
    with pages.follow("ex"):
        async with trio.open_nursery() as nursery:
            leader = trio.CancelScope()

            async def lead() -> None:
                with leader:
                    await pages.next_page("ex", 0, lambda: version.changed(0), "k", fine, _encode)

            async def follow() -> None:
                got.append(await pages.next_page("ex", 0, lambda: version.changed(0), "k", fine, _encode))

            nursery.start_soon(lead)
            await trio.testing.wait_all_tasks_blocked()
            for _ in range(3):
                nursery.start_soon(follow)
            await trio.testing.wait_all_tasks_blocked()
            leader.cancel()  # its client went away before the commit
            await trio.testing.wait_all_tasks_blocked()
            assert version.waits == 2, "one of the others waits in its place"
            version.move()
        assert got == [(1, ("page", b"page"))] * 3 and calls == ["fine"]

        failed: list[BaseException] = []

        async def lead_broken() -> None:
            try:
                await pages.next_page("ex", 1, lambda: version.changed(1), "k2", broken, _encode)
            except OSError as e:
                failed.append(e)

        async def follow_fine() -> None:
            got.append(await pages.next_page("ex", 1, lambda: version.changed(1), "k2", fine, _encode))

        got.clear()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lead_broken)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(follow_fine)
            nursery.start_soon(follow_fine)
            await trio.testing.wait_all_tasks_blocked()
            version.move()
        assert len(failed) == 1 and got == [(2, ("page", b"page"))] * 2
        assert calls == ["fine", "broken", "fine"], "after the failed read, one of the others reads for both"
