"""Live display past the budget: output that is no longer journaled still reaches live followers.

Once an execution's event budget is spent, its capture goes on reading the spool files (to hash
them) and hands each new chunk to the execution's `DisplayHub`, which decodes it once and gives
the text to every follower. These display updates are not journaled and not replayed; the
artifacts stay authoritative. Each follower buffers at most `FOLLOWER_BUFFER_BYTES`; past that it
drops text and counts the bytes, and its stream reports them once as a `gap`. So a slow follower
never slows the capture, the process or the other followers, and memory stays bounded.
"""

from __future__ import annotations

import codecs
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import trio

FOLLOWER_BUFFER_BYTES = 2 * 1024 * 1024


@dataclass(eq=False)
class DisplayFollower:
    """What one live follower has not yet sent: text per stream, in order, and what it missed."""

    pending: list[tuple[str, str]] = field(default_factory=list)
    pending_bytes: int = 0
    missed_bytes: int = 0
    version: int = 0
    _lot: trio.lowlevel.ParkingLot = field(default_factory=trio.lowlevel.ParkingLot)

    def offer(self, stream: str, text: str, raw_bytes: int) -> None:
        """Buffer what fits of `text` (which stands for `raw_bytes` of output); count the rest missed."""
        room = FOLLOWER_BUFFER_BYTES - self.pending_bytes
        if raw_bytes > room:
            kept = split_text(text, room)[0] if room >= 4 else ""
            kept_raw = len(kept.encode("utf-8")) if kept else 0
            self.missed_bytes += raw_bytes - kept_raw
            text, raw_bytes = kept, kept_raw
        if text:
            if self.pending and self.pending[-1][0] == stream:
                self.pending[-1] = (stream, self.pending[-1][1] + text)
            else:
                self.pending.append((stream, text))
            self.pending_bytes += raw_bytes
        self.version += 1
        self._lot.unpark_all()

    def take(self) -> tuple[list[tuple[str, str]], int]:
        """Everything buffered, and the bytes missed since the last take (then both are cleared)."""
        pending, missed = self.pending, self.missed_bytes
        self.pending, self.pending_bytes, self.missed_bytes = [], 0, 0
        return pending, missed

    async def wait_changed(self, seen: int) -> None:
        while self.version == seen:
            await self._lot.park()


@dataclass(eq=False)
class DisplayHub:
    """The followers of one execution's live display, and its per-stream decoders."""

    followers: set[DisplayFollower] = field(default_factory=set)
    _decoders: dict[str, codecs.IncrementalDecoder] = field(default_factory=dict)

    def publish(self, stream: str, data: bytes | memoryview) -> None:
        """Hand `data` (bytes of `stream`, in order) to every follower."""
        decoder = self._decoders.get(stream)
        if decoder is None:
            decoder = self._decoders[stream] = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if not self.followers:
            decoder.reset()  # nobody watches; a follower that arrives starts afresh
            return
        text = decoder.decode(data)
        if not text:
            return
        for follower in self.followers:
            follower.offer(stream, text, len(data))


class Displays:
    """Every execution's display hub, created when a follower arrives, dropped when the last leaves.

    It also counts the bytes each execution published past its budget, so that a follower who
    arrives late is told (as missed bytes, hence a `gap`) that the display does not continue
    where the journal ends.
    """

    def __init__(self) -> None:
        self._hubs: dict[str, DisplayHub] = {}
        self._published: dict[str, int] = {}

    def publish(self, execution_id: str, stream: str, data: bytes | memoryview) -> None:
        self._published[execution_id] = self._published.get(execution_id, 0) + len(data)
        hub = self._hubs.get(execution_id)
        if hub is not None:
            hub.publish(stream, data)

    def forget(self, execution_id: str) -> None:
        """The execution ended: nothing more will be published for it."""
        self._published.pop(execution_id, None)

    @contextlib.contextmanager
    def follow(self, execution_id: str) -> Iterator[DisplayFollower]:
        hub = self._hubs.get(execution_id)
        if hub is None:
            hub = self._hubs[execution_id] = DisplayHub()
        follower = DisplayFollower(missed_bytes=self._published.get(execution_id, 0))
        hub.followers.add(follower)
        try:
            yield follower
        finally:
            hub.followers.discard(follower)
            if not hub.followers and self._hubs.get(execution_id) is hub:
                del self._hubs[execution_id]


def split_text(text: str, max_bytes: int) -> list[str]:
    """Cut `text` into pieces of at most `max_bytes` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return [text] if text else []
    pieces = []
    start = 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces
