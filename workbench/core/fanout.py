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
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import trio

T = TypeVar("T")


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
