"""The SSE stream of an execution's events: a tail of the journal, plus the live display.

A stream replays the committed events after `Last-Event-ID` (or `?after=`, or from the start),
then sleeps on the execution's wake-up and sends what each commit added, and ends after the
terminal event; resumed after the terminal event, it is `204 No Content`. Every pending event
goes out in one write. The stream reads the journal only as fast as the client takes its bytes,
so a slow client holds nothing but its own page of events and never slows the execution or other
readers. Streams at one cursor share one read of the journal and one encoded page
(`workbench.core.fanout`): a follower waits at most for another's read of the store, never for
another's connection. Between commits, the streams that are up to date wait together: a commit
wakes one of them, which reads the page and wakes the others with it. Past the output budget,
output that is no longer journaled still goes out as `output` events without an `id:` (and a
`gap` event where a slow client missed some). A `: keepalive` comment goes out after 10 to 15 s
of quiet; the stream ends at once when the daemon begins to stop.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from functools import partial

import trio
from quart import Response

from workbench.core.daemon import Daemon
from workbench.core.display import DisplayFollower, split_text
from workbench.core.records import format_time, now_ms
from workbench.core.service import Principal, StreamPage
from workbench.core.store.watch import TICK_S, Watch
from workbench.core.waiting import first_of
from workbench.wire.errors import NotFound

KEEPALIVE_S = 15.0
#: Events read per journal query, and the most bytes of events held for one client at once.
PAGE_EVENTS = 4096
PAGE_BYTES = 1024 * 1024


def display_frames(follower: DisplayFollower, delta_max: int) -> str:
    """The follower's buffered display text as id-less `output` events, after a `gap` if it missed some."""
    pending, missed = follower.take()
    out = []
    if missed:
        out.append(f"event: gap\ndata: {json.dumps({'missedBytes': missed})}\n\n")
    stamp = format_time(now_ms())
    for stream, text in pending:
        for piece in split_text(text, delta_max):
            body = {
                "sequence": None,
                "eventType": "output",
                "status": "running",
                "timestamp": stamp,
                "stream": stream,
                "outputDelta": piece,
                "message": None,
                "progress": None,
                "total": None,
                "exitCode": None,
                "signal": None,
                "error": None,
                "item": None,
            }
            out.append(f"event: output\ndata: {json.dumps(body, ensure_ascii=False)}\n\n")
    return "".join(out)


#: The next page as `SharedPages.next_page` hands it: the version noted before its read, the page.
Ready = tuple[int, tuple[StreamPage, bytes]]


def _encode(page: StreamPage) -> bytes:
    return page.frames.encode("utf-8")


@dataclass(frozen=True)
class Options:
    """What a stream was asked for besides where to start."""

    #: The session the execution must be of (another is 404, like an unknown id).
    session_id: str | None = None
    #: Only events of these types (None: all); their sequences stay the journal's.
    types: frozenset[str] | None = None
    #: Whether it may go on: one opened with a session cookie ends with the session (looked at
    #: after each wake-up; a logout wakes every stream, `Watches.tick`).
    alive: Callable[[], bool] = lambda: True


async def stream(
    daemon: Daemon,
    principal: Principal,
    execution_id: str,
    kind: str | None,
    after: int,
    options: Options = Options(),
) -> Response:
    """The `text/event-stream` response of the events after `after` (or a JSON error before it
    starts); `204` for a reconnect after the terminal event, so that an `EventSource` stops."""
    svc = daemon.service
    execution = await svc.get(principal, execution_id, kind)  # 404 before the stream starts
    if options.session_id is not None and execution.session_id != options.session_id:
        raise NotFound(f"no execution {execution_id} in session {options.session_id}")
    if execution.terminal and after >= execution.last_sequence:
        # Resumed after the terminal event: nothing will ever come. 204 tells an `EventSource`
        # to stop reconnecting (an empty 200 would have it reconnect every few seconds forever).
        return Response("", status=204)
    response = Response(
        _events(daemon, execution_id, execution.last_sequence, after, options),
        status=200,
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None
    return response


async def _events(
    daemon: Daemon, execution_id: str, last_sequence: int, after: int, options: Options
) -> AsyncIterator[bytes]:
    """The frames of one execution's stream: its journal from `after`, live, and display output
    past the budget; keep-alive comments while nothing happens."""
    svc = daemon.service
    types, alive = options.types, options.alive
    delta_max = daemon.settings.execution_event_delta_max_bytes
    display_wanted = types is None or "output" in types
    # An id beyond the last event: nothing to replay; follow live from here.
    cursor = min(after, last_sequence)
    display_open = False
    sent = trio.current_time()  # the last write: a keep-alive follows a quiet spell after it
    with (
        svc.journal.watch(execution_id) as watch,
        daemon.executor.displays.follow(execution_id) as display,
        daemon.pages.follow(execution_id),
    ):
        ready: Ready | None = None  # the next page, when it came with the wake-up (`next_page`)
        while not daemon.stopping.is_set() and alive():
            display_seen = display.version
            if ready is not None:
                seen, (page, encoded) = ready
                ready = None
            else:
                seen = watch.version
                # Streams at this cursor share one read and one encoding of the page (`fanout`).
                at = _page_at(daemon, execution_id, cursor, display_wanted and not display_open, types)
                page, encoded = await daemon.pages.page(execution_id, seen, *at, _encode)
            # Display text taken after the read: all of it was written before what the read saw.
            shown = display_frames(display, delta_max) if display_open else ""
            cursor = page.next_after
            if (
                display_wanted
                and not display_open
                and page.truncated_at is not None
                and cursor >= page.truncated_at
            ):
                display_open = True
                display_seen = -1  # what waited for the truncation event goes out next
            if shown:  # one write still: the display's text, then the page
                yield shown.encode("utf-8") + encoded
                sent = trio.current_time()
            elif encoded:
                yield encoded
                sent = trio.current_time()
            if page.terminal:
                return
            if page.more or (display_open and display.version != display_seen):
                continue
            # The daemon's stop wakes every watch (`Watches.wake_all`), and `_changed` then reports
            # nothing new: the loop's condition sees the stop. A tick of `watches` (every
            # `TICK_S`) wakes a wait too: a keep-alive once quiet for `KEEPALIVE_S - TICK_S`, so
            # never more than `KEEPALIVE_S` without a write.
            at = _page_at(daemon, execution_id, cursor, display_wanted and not display_open, types)
            while True:
                moved, ready = await _wait(
                    daemon, execution_id, watch, display if display_open else None, (seen, display_seen), at
                )
                if moved:
                    break
                if not alive():
                    return
                if trio.current_time() - sent >= KEEPALIVE_S - TICK_S:
                    yield b": keepalive\n\n"
                    sent = trio.current_time()


def _page_at(
    daemon: Daemon, execution_id: str, cursor: int, find_truncation: bool, types: frozenset[str] | None
) -> tuple[Hashable, Callable[[], Awaitable[StreamPage]]]:
    """The key that streams sharing the page after `cursor` ask it by, and its read."""
    read = partial(
        daemon.service.stream_page,
        execution_id,
        cursor,
        PAGE_EVENTS,
        PAGE_BYTES,
        find_truncation=find_truncation,
        types=types,
    )
    return (cursor, find_truncation, types), read


async def _wait(
    daemon: Daemon,
    execution_id: str,
    watch: Watch,
    display: DisplayFollower | None,
    seen: tuple[int, int],
    at: tuple[Hashable, Callable[[], Awaitable[StreamPage]]],
) -> tuple[bool, Ready | None]:
    """Wait for a commit after the watch's version `seen[0]` (or, with `display` open, for its
    version to move from `seen[1]`), or for a tick: (whether something moved, the next page when
    it came with the wake-up)."""
    watches = daemon.service.store.watches
    tick = watches.ticks
    if display is not None:
        await first_of(partial(watches.wait, watch, seen[0], tick), partial(display.wait_changed, seen[1]))
        return watch.version != seen[0] or display.version != seen[1], None
    # Up to date, the stream waits with the others at its cursor: one of them reads the next
    # page after the commit, and wakes the others with it.
    key, read = at
    changed = partial(_changed, daemon, watch, seen[0], tick)
    ready = await daemon.pages.next_page(execution_id, seen[0], changed, key, read, _encode)
    return ready is not None or daemon.stopping.is_set(), ready


async def _changed(daemon: Daemon, watch: Watch, seen: int, tick: int) -> int | None:
    """The watch's version once it moved from `seen`; None after a tick (`Watches.ticks` moved
    from `tick`) or when the daemon begins to stop, with nothing to read."""
    await daemon.service.store.watches.wait(watch, seen, tick)
    if watch.version == seen or daemon.stopping.is_set():
        return None
    return watch.version
