"""Followers at one cursor share one read of the journal and one encoded page.

A stream notes the execution's watch version, then reads the page after its cursor. When many
streams follow one execution, they are at the same cursor after each commit, and they would each
read the same page and encode the same frames. `SharedPages` lets the first of them read (the
leader) and hands its page, encoded once, to every follower that asks for the same page having
noted the same or an older version: a read that began after the version a follower noted saw
every commit that follower knows of, so the follower gets exactly what its own read would have
given it, or more. A follower that noted a newer version reads for itself (and leads the next
ones). A leader whose read fails or is cancelled (its client went away) leaves its followers to
read again for themselves: no follower depends on another's connection.

Between commits, followers that are up to date wait for the next page together (`next_page`):
one of them (the broadcaster) sleeps on the execution's wake-up, reads the page after the commit
and only then wakes the others with it in hand. A commit so wakes one reader, not every follower
to find that another is already reading (each follower woken twice, once for nothing, cost some
10 µs per follower and event).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import trio

T = TypeVar("T")


@dataclass(eq=False)
class _Next(Generic[T]):
    """Followers waiting for the page after one version, and what their broadcaster found."""

    lot: trio.lowlevel.ParkingLot = field(default_factory=trio.lowlevel.ParkingLot)
    done: bool = False
    #: (the version noted before the read, (the page, its encoding)); None when done: no change.
    result: tuple[int, tuple[T, bytes]] | None = None


@dataclass(eq=False)
class _Read(Generic[T]):
    #: The watch version the leader noted before it read.
    version: int
    done: trio.Event = field(default_factory=trio.Event)
    result: tuple[T, bytes] | None = None


class SharedPages(Generic[T]):
    """In-flight and just-made pages per execution, for the streams that follow it now."""

    def __init__(self) -> None:
        self._pages: dict[str, dict[Hashable, _Read[T]]] = {}
        self._users: dict[str, int] = {}
        self._next: dict[str, dict[Hashable, _Next[T]]] = {}
        #: Pages handed to a follower without a read of its own (for the benchmarks and tests).
        self.shared = 0
        self.reads = 0

    @contextlib.contextmanager
    def follow(self, execution_id: str) -> Iterator[None]:
        """For the duration of a stream: its execution's pages are kept while someone follows it."""
        self._users[execution_id] = self._users.get(execution_id, 0) + 1
        try:
            yield
        finally:
            self._users[execution_id] -= 1
            if self._users[execution_id] == 0:
                del self._users[execution_id]
                self._pages.pop(execution_id, None)
                self._next.pop(execution_id, None)

    async def page(
        self,
        execution_id: str,
        seen: int,
        key: Hashable,
        read: Callable[[], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> tuple[T, bytes]:
        """The page `read()` gives and its encoding, for a follower that noted version `seen`
        before asking: shared with the followers asking the same `key` at a version no newer."""
        while True:
            pages = self._pages.setdefault(execution_id, {})
            found = pages.get(key)
            if found is None or found.version < seen or (found.done.is_set() and found.result is None):
                break
            if not found.done.is_set():
                await found.done.wait()
            if found.result is not None:
                self.shared += 1
                return found.result
            # The leader's read failed or was cancelled: read again (perhaps leading).
        mine: _Read[T] = _Read(seen)
        # Pages of older versions can serve nobody newer: drop them with this one's arrival.
        for stale in [k for k, r in pages.items() if r.version < seen and r.done.is_set()]:
            del pages[stale]
        pages[key] = mine
        self.reads += 1
        try:
            value = await read()
            mine.result = (value, encode(value))
            return mine.result
        finally:
            mine.done.set()
            if mine.result is None and pages.get(key) is mine:
                del pages[key]

    async def next_page(
        self,
        execution_id: str,
        seen: int,
        wait_change: Callable[[], Awaitable[int | None]],
        key: Hashable,
        read: Callable[[], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> tuple[int, tuple[T, bytes]] | None:
        """The page of `key` after the next commit, for a follower up to date at version `seen`:
        the version noted before its read, and the page. None when `wait_change()` returned None (a tick, or
        the daemon stopping: nothing new to read).

        The first to ask leads: it waits (`wait_change`, which returns the version once it moved
        from `seen`), reads, and wakes the others asking the same. They wake once, page in hand.
        A leader cancelled or failing wakes them to go on without it (one of them leads then).
        """
        groups = self._next.setdefault(execution_id, {})
        group_key = (key, seen)
        while True:
            group = groups.get(group_key)
            if group is None:
                break
            await group.lot.park()
            if group.done:
                if group.result is not None:
                    self.shared += 1
                return group.result
            # The broadcaster went away before it had the page: go on without it.
        mine: _Next[T] = _Next()
        groups[group_key] = mine
        try:
            version = await wait_change()
            if version is not None:
                mine.result = (version, await self.page(execution_id, version, key, read, encode))
            mine.done = True
            return mine.result
        finally:
            if groups.get(group_key) is mine:
                del groups[group_key]
            mine.lot.unpark_all()
