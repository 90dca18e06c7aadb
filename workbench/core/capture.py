"""Capture: follow an execution's spool files and journal what they hold.

The process writes straight to `stdout` and `stderr` files in its directory; this task follows
them (woken by inotify), feeds new bytes to the sans-IO `OutputCapture`, and appends the deltas
to the journal together with the spool offsets they reach, so a restarted daemon resumes exactly.
Small writes are coalesced: a lone line is journaled at once, a chatty process at most once per
`flush_ms`; what a new execution writes in its first `YOUNG_HOLD_S` waits that long for its end
and what is read at the end is not appended but held (`held`) for the terminal status's
transaction (`finish`), so a short command's output and its end cost one commit, not two. Every
byte is hashed as it is read, so keeping a 1 GB spool file as an artifact does not cost a second
pass at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from workbench.core.follow import IN_CREATE, Inotify
from workbench.core.journal import Journal
from workbench.core.layout import ExecutionDir
from workbench.core.output import STREAMS, Delta, OutputCapture, OutputTruncated, Stream
from workbench.core.records import event_builder
from workbench.core.store.rows import EventBuilder

_CHUNK = 1024 * 1024
_BIG_CHUNK = 4 * 1024 * 1024
#: Most event bytes gathered before they are appended, so memory stays bounded.
_APPEND_AT = 1024 * 1024
#: Counters alone (past the budget) are written at most this often, and at least this soon
#: after they changed, even when nothing else is written.
_COUNTERS_EVERY = 0.25
#: Progress is a budget of its own: at most one event per this many seconds, the latest line
#: wins, and the last one is always kept.
_PROGRESS_EVERY = 0.25
#: Digits a progress number may have: more is not a progress count (and not a float we emit).
_DIGITS = 18
_NUMBER = rf"(\d{{1,{_DIGITS}}}(?:\.\d{{1,{_DIGITS}}})?)"
_PROGRESS = re.compile(rf"\s*{_NUMBER}\s*/\s*{_NUMBER}(?:\s+(.*?))?\s*")
_PROGRESS_LINE_MAX = 4096
_PROGRESS_PIECE = 64 * 1024
#: Most of the progress file read in one turn; unread progress past it is skipped to its last
#: piece (only the latest line counts), so a tree flooding the file cannot hold the event loop.
_PROGRESS_TURN = 1024 * 1024
#: A new execution's output in its first this many seconds waits for its end: most short
#: commands end by then, and their output then shares the terminal status's commit (as their
#: `running` does, which lingers as long: `store.batching.LINGER_S`).
YOUNG_HOLD_S = 0.010


@dataclass(eq=False)
class _Stream:
    name: Stream
    path: Path
    fd: int = -1
    #: Bytes read (and fed, hashed) so far.
    offset: int = 0
    hasher: Any = None  # hashlib sha256 object, or None when the prefix was not hashed here


@dataclass
class CaptureResult:
    """What capture learned by the end: sizes, and the spool files that are kept as artifacts."""

    sizes: dict[str, int] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)  # stream -> sha256


class Capture:
    """Follows one execution's spool files and progress file into the journal."""

    def __init__(
        self,
        *,
        journal: Journal,
        inotify: Inotify,
        execution_id: str,
        directory: ExecutionDir,
        output: OutputCapture,
        flush_ms: int,
        offsets: dict[str, int] | None = None,
        progress_offset: int = 0,
        on_display: Callable[[str, bytes | memoryview], None] | None = None,
        hold: bool = True,
    ) -> None:
        self._journal = journal
        self._id = execution_id
        self._dir = directory
        self.output = output
        self._flush_s = flush_ms / 1000
        start = offsets or {}
        self._streams = [_Stream(name, directory.spool(name), offset=start.get(name, 0)) for name in STREAMS]
        for s in self._streams:
            s.hasher = hashlib.sha256() if s.offset == 0 else None
        self._progress_path = directory.progress
        self._progress_offset = progress_offset
        self._progress_fd = -1
        self._finish = trio.Event()
        self._watches = inotify.group()
        self._on_display = on_display
        self._buffer: memoryview | None = None
        self._counters_at = 0.0
        self._counters_dirty = False
        self._progress_at = -float("inf")
        self._progress_pending: tuple[float, float, str | None] | None = None
        #: The progress file has more than one turn read (`_progress_events`).
        self._progress_more = False
        #: Its files are watched (`_watch`): not in a new execution's first moments.
        self._watching = False
        #: trio time of the last output seen; the idle timeout watches it.
        self.last_output = trio.current_time()
        self.result = CaptureResult()
        #: Until when a new execution's output waits for its end: not a resumed one's, nor one
        #: that others act on as it comes (`hold` False: its input answers a prompt, its
        #: readiness is seen in it), whose output must come before what they do in the journal.
        held = hold and offsets is None
        self._hold_until = self.last_output + YOUNG_HOLD_S if held else -math.inf
        #: The events the last read made, held for the terminal status (`take_held`).
        self._held: list[tuple[str, EventBuilder]] = []
        #: Held by each read that journals, and by `caught_up`'s caller while it journals its own.
        self._order = trio.Lock()

    def finish(self) -> None:
        """Ask `run` to read everything that is left, journal it, and return (the tree is dead)."""
        self._finish.set()
        self._watches.interrupt()

    async def run(self) -> None:
        """Follow until `finish()`; then drain to the end of the files and return."""
        try:
            self._open()
            # A new execution's first output waits for its end, if that comes soon; its files are
            # watched only after that (a short one's are read once, at its end, and never watched).
            with trio.move_on_at(self._hold_until):
                await self._finish.wait()
            if not self._finish.is_set():
                self._watch()
            while True:
                finishing = self._finish.is_set()
                seen = self._watches.version
                if not finishing:
                    # Re-armed before the files are read: a write from now on wakes us. (The
                    # last read goes to the end of the files of a dead tree: nothing to wake it.)
                    self._watches.arm()
                await self._take_order()
                try:
                    await self._pump(final=finishing)
                finally:
                    self._order.release()
                if finishing:
                    break
                flushed_at = trio.current_time()
                with trio.move_on_at(self._due()):
                    await self._watches.wait(seen)
                # Coalesce: a chatty process is journaled at most once per flush interval (and,
                # its one-shot watch spent meanwhile, raises no event per write). Past the budget
                # nothing is journaled but counters (`_COUNTERS_EVERY`): bytes are only hashed,
                # and hashing must keep pace with the writer, not rest a flush interval between
                # reads (at 3 ms a turn it kept about half the pace of a fast writer).
                if not self._finish.is_set() and not self.output.truncated:
                    with trio.move_on_at(flushed_at + self._flush_s):
                        await self._finish.wait()
            await self._finalize()
        finally:
            self._close()

    async def _take_order(self) -> None:
        """Take `_order`: at once while nobody holds it (the usual case), without the schedule
        point of `Lock.acquire`, which let every other ready task (200 followers) go first at
        each read: a chatty execution's capture fell behind its writer."""
        try:
            self._order.acquire_nowait()
        except trio.WouldBlock:
            await self._order.acquire()

    @contextlib.asynccontextmanager
    async def caught_up(self) -> AsyncIterator[None]:
        """For an event of the caller's own among the output (an input, a resize): what the tree
        wrote until now is journaled first, and what it writes meanwhile waits for the block's
        end, so that what the caller journals in it comes between the two."""
        await self._take_order()
        try:
            # (Past the budget no output is journaled: nothing to order, only bytes to hash.)
            if self._streams[0].fd >= 0 and not self._finish.is_set() and not self.output.truncated:
                await self._pump(final=False)
            yield
        finally:
            self._order.release()

    def _due(self) -> float:
        """When what is held back (counters, the latest progress) must be written anyway."""
        due = float("inf")
        if self._counters_dirty:
            due = self._counters_at + _COUNTERS_EVERY
        if self._progress_pending is not None:
            due = min(due, self._progress_at + _PROGRESS_EVERY)
        return -math.inf if self._progress_more else due

    # -- following -------------------------------------------------------------------------

    def _open(self) -> None:
        for s in self._streams:
            # O_CREAT, not a touch: the supervisor has made them already, and a touch would
            # write their inodes' times for nothing.
            s.fd = os.open(s.path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _watch(self) -> None:
        """Follow the files from now on (each read after this is woken by a write)."""
        self._watching = True
        for s in self._streams:
            self._watches.add(str(s.path))
        if self._progress_fd >= 0:
            self._watches.add(str(self._progress_path))
        elif not self._open_progress():
            # The process may create it later: watch the directory for its creation.
            self._watches.add(str(self._dir.path), IN_CREATE)

    def _open_progress(self) -> bool:
        try:
            self._progress_fd = os.open(self._progress_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        if self._watching:
            self._watches.add(str(self._progress_path))
        return True

    def _close(self) -> None:
        for s in self._streams:
            if s.fd >= 0:
                os.close(s.fd)
                s.fd = -1
        if self._progress_fd >= 0:
            os.close(self._progress_fd)
            self._progress_fd = -1
        self._watches.close()

    async def _pump(self, *, final: bool) -> None:
        """Read what is new in every file, journal it (flushing partial deltas), update counters."""
        events: list[tuple[str, EventBuilder]] = []
        pending = 0
        for s in self._streams:
            while True:
                if self.output.truncated:
                    got = await self._read_past_budget(s)
                    if got:
                        self._counters_dirty = True
                        continue
                    break
                data = os.pread(s.fd, _CHUNK, s.offset)
                if not data:
                    break
                s.offset += len(data)
                if s.hasher is not None:
                    s.hasher.update(data)
                self.last_output = trio.current_time()
                self._counters_dirty = True
                for item in self.output.feed(s.name, data):
                    events.append(self._event(item))
                    pending += len(item.text) if isinstance(item, Delta) else 0
                    if isinstance(item, OutputTruncated):
                        self._display_unjournaled()
                if pending >= _APPEND_AT:
                    await self._append(events)
                    events, pending = [], 0
        for item in self.output.flush_all(final=final):
            events.append(self._event(item))
        events.extend(self._progress_events(final=final))
        now = trio.current_time()
        if final:
            # At the end, these events and the counters go with the terminal status (`held`,
            # `fields`): one commit for both.
            self._held.extend(events)
        elif events or (self._counters_dirty and now - self._counters_at >= _COUNTERS_EVERY):
            await self._append(events)

    def held(self) -> list[tuple[str, EventBuilder]]:
        """The events of the last read, not yet journaled: the caller commits them just before
        the terminal status, in its transaction (see `Journal.transition`'s `before`), with the
        offsets they reach (`fields`), and then says so (`committed_held`). Until then they are
        kept: an end that fails before its commit and is tried again still has them."""
        return list(self._held)

    def committed_held(self) -> None:
        self._held = []

    async def _read_past_budget(self, s: _Stream) -> int:
        """Past the budget nothing more is journaled; bytes are hashed (off the trio thread).

        Reads go into one reused buffer: a fresh megabyte object per read would cost the
        allocator a mapping and the kernel a page fault per page, at gigabytes of output.
        """
        size = os.fstat(s.fd).st_size
        if size <= s.offset:
            return 0
        if self._buffer is None:
            self._buffer = memoryview(bytearray(_BIG_CHUNK))
        view = self._buffer[: min(size - s.offset, _BIG_CHUNK)]
        hasher, fd, offset = s.hasher, s.fd, s.offset

        def work() -> int:
            got = os.preadv(fd, [view], offset)
            if hasher is not None:
                hasher.update(view[:got])
            return got

        got = await trio.to_thread.run_sync(work)
        data = view[:got]
        s.offset += got
        self.last_output = trio.current_time()
        self.output.feed(s.name, data)  # past the budget this only counts the bytes
        if self._on_display is not None:
            self._on_display(s.name, data)
        return got

    def _display_unjournaled(self) -> None:
        """At the budget's edge: bytes already read but not journaled go to the live display."""
        if self._on_display is None:
            return
        for s in self._streams:
            start = self.output.offset(s.name)
            if s.offset > start:
                self._on_display(s.name, os.pread(s.fd, s.offset - start, start))

    def _event(self, item: Delta | OutputTruncated) -> tuple[str, EventBuilder]:
        if isinstance(item, Delta):
            return "output", event_builder("output", stream=item.stream, output_delta=item.text)
        budget = self.output.budget_bytes
        return "output_truncated", event_builder(
            "output_truncated",
            message=(
                f"the output passed the event budget of {budget} bytes; every byte is kept in the "
                "artifacts stdout and stderr (of each stream that wrote any)"
            ),
        )

    def _skip_old_progress(self) -> None:
        """More than `_PROGRESS_TURN` unread: on to the first line of the file's last piece."""
        size = os.fstat(self._progress_fd).st_size
        if size - self._progress_offset <= _PROGRESS_TURN:
            return
        start = size - _PROGRESS_PIECE
        newline = os.pread(self._progress_fd, _PROGRESS_PIECE, start).find(b"\n")
        self._progress_offset = start + newline + 1 if newline >= 0 else start

    def _progress_events(self, *, final: bool) -> list[tuple[str, EventBuilder]]:
        if self._progress_fd < 0 and not self._open_progress():
            return []
        events: list[tuple[str, EventBuilder]] = []
        read = 0
        self._progress_more = False
        self._skip_old_progress()  # once a turn: what it leaves is one turn's reading at most
        while True:
            if read >= _PROGRESS_TURN and not final:
                self._progress_more = True  # the rest in the next turn (`_due`)
                break
            data = os.pread(self._progress_fd, _PROGRESS_PIECE, self._progress_offset)
            if not data:
                break
            read += len(data)
            end = data.rfind(b"\n")
            if end < 0:
                if len(data) > _PROGRESS_LINE_MAX or final:
                    self._progress_offset += len(data)  # an endless line is not progress: skip it
                    continue
                break
            self._progress_offset += end + 1
            for line in reversed(data[: end + 1].splitlines()):
                parsed = parse_progress(line)
                if parsed is not None:
                    self._progress_pending = parsed  # the latest wins
                    break
        now = trio.current_time()
        if self._progress_pending is not None and (final or now - self._progress_at >= _PROGRESS_EVERY):
            done, total, message = self._progress_pending
            self._progress_pending, self._progress_at = None, now
            events.append(
                ("progress", event_builder("progress", progress=done, total=total, message=message))
            )
        return events

    async def _append(self, events: list[tuple[str, EventBuilder]]) -> None:
        self._counters_at = trio.current_time()
        self._counters_dirty = False
        await self._journal.append(self._id, events, self.fields())

    def fields(self) -> dict[str, Any]:
        """The execution columns that describe how far capture got."""
        out = self.output
        return {
            "stdout_bytes": self._streams[0].offset,
            "stderr_bytes": self._streams[1].offset,
            "event_bytes": out.event_bytes,
            "truncated": int(out.truncated),
            "stdout_offset": out.offset("stdout"),
            "stderr_offset": out.offset("stderr"),
            "stdout_invalid": int(out.invalid_utf8("stdout")),
            "stderr_invalid": int(out.invalid_utf8("stderr")),
            "progress_offset": self._progress_offset,
        }

    async def _finalize(self) -> None:
        """Decide which spool files are kept as artifacts (hashing any unhashed prefix)."""
        for s in self._streams:
            self.result.sizes[s.name] = s.offset
            if not self.output.keep_artifact(s.name):
                continue
            if s.hasher is None:
                s.hasher = await trio.to_thread.run_sync(_hash_file, s.path, s.offset)
            self.result.kept[s.name] = s.hasher.hexdigest()


def _hash_file(path: Path, size: int) -> Any:
    hasher = hashlib.sha256()
    with open(path, "rb") as f:
        remaining = size
        while remaining > 0:
            block = f.read(min(remaining, _BIG_CHUNK))
            if not block:
                break
            hasher.update(block)
            remaining -= len(block)
    return hasher


def _number(text: str) -> float:
    return float(text) if "." in text else int(text)


def parse_progress(line: bytes) -> tuple[float, float, str | None] | None:
    """`DONE/TOTAL message` → (done, total, message); None for a line that is not one."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found = _PROGRESS.fullmatch(text)
    if found is None:
        return None
    done, total = _number(found.group(1)), _number(found.group(2))
    if total <= 0 or done < 0 or not (math.isfinite(done) and math.isfinite(total)):
        return None
    message = found.group(3) or None
    return done, total, message
