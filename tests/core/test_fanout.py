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


async def test_a_leader_that_is_cancelled_or_fails_leaves_its_followers_to_read() -> None:
    """Connections are not runs (5): one follower's going away costs the others nothing."""
    pages: SharedPages[str] = SharedPages()
    calls = []

    async def stuck() -> str:
        calls.append("stuck")
        await trio.sleep_forever()
        raise AssertionError

    async def fine() -> str:
        calls.append("fine")
        return "ok"

    async def broken() -> str:
        calls.append("broken")
        raise OSError("store")

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
