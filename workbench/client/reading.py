"""The calls that read, for both clients: records, listings, waits, events, artifacts, images,
health and the exits feed, each described once as a plan of steps (see `workbench.client.plan`)
and performed by `Client` and `AsyncClient` alike. The calls that start and change are in
`workbench.client.methods`.
"""

from __future__ import annotations

import builtins
import time
from typing import Literal

from workbench.client import calls
from workbench.client.base import Base
from workbench.client.calls import ExecutionRef
from workbench.client.plan import (
    BROKEN,
    NEXT_LINE,
    READ_BODY,
    Item,
    Open,
    Plan,
    Sleep,
    Stream,
    iterator,
    method,
    send,
)
from workbench.client.sse import FrameReader
from workbench.wire.models import (
    Artifact,
    Event,
    EventPage,
    Execution,
    ExecutionKind,
    ExecutionList,
    Exit,
    Health,
    Image,
    LiveEvent,
    StreamName,
)
from workbench.wire.status import StatusName

# -- reading ----------------------------------------------------------------------------------


@method
def get(client: Base, execution: ExecutionRef) -> Plan[Execution]:
    """The current record. Raises NotFound for an unknown id (or another principal's)."""
    return (yield from send(client, calls.get(execution)))


@method
def list(
    client: Base,
    *,
    status: StatusName | None = None,
    kind: ExecutionKind | None = None,
    session_id: str | None = None,
    limit: int = 50,
    preview: bool = False,
    rerun_of: ExecutionRef | None = None,
    batch_id: ExecutionRef | None = None,
) -> Plan[builtins.list[Execution]]:
    """Up to `limit` executions, newest first, following the pages as needed (with `preview`,
    each record carries its `preview`, otherwise None; `rerun_of`: only the reruns of that
    execution; `batch_id`: only the items of that batch)."""
    out: builtins.list[Execution] = []
    cursor: str | None = None
    while len(out) < limit:
        page = yield from list_page(
            client,
            status=status,
            kind=kind,
            session_id=session_id,
            limit=min(1000, limit - len(out)),
            cursor=cursor,
            preview=preview,
            rerun_of=rerun_of,
            batch_id=batch_id,
        )
        out.extend(page.executions)
        cursor = page.next_cursor
        if cursor is None:
            break
    return out


@method
def list_page(
    client: Base,
    *,
    status: StatusName | None = None,
    kind: ExecutionKind | None = None,
    session_id: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
    preview: bool = False,
    rerun_of: ExecutionRef | None = None,
    batch_id: ExecutionRef | None = None,
) -> Plan[ExecutionList]:
    """One page of the listing; pass its `next_cursor` back as `cursor` for the next."""
    call = calls.list_page(
        status=status,
        kind=kind,
        session_id=session_id,
        limit=limit,
        cursor=cursor,
        preview=preview,
        rerun_of=calls.execution_id(rerun_of) if rerun_of is not None else None,
        batch_id=calls.execution_id(batch_id) if batch_id is not None else None,
    )
    return (yield from send(client, call))


@method
def wait(
    client: Base,
    execution: ExecutionRef,
    timeout: float | None = None,
    *,
    until: Literal["end", "ready"] = "end",
) -> Plan[Execution]:
    """Wait for the end, at most `timeout` seconds (None: as long as it runs); the record then.
    `until="ready"`: for a service, until it is ready (`.ready`) or has ended.

    A wait that times out returns the record as it is (check `.terminal`) and changes nothing.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = calls.MAX_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
        result = yield from send(client, calls.wait_once(execution, left, until))
        if not result.wait_timed_out or (deadline is not None and time.monotonic() >= deadline):
            return result.execution


@method
def events_page(client: Base, execution: ExecutionRef, after: int = 0, limit: int = 1000) -> Plan[EventPage]:
    """One page of journal events after sequence `after`."""
    return (yield from send(client, calls.events_page(execution, after, limit)))


@iterator
def events(
    client: Base, execution: ExecutionRef, *, after: int = 0, follow: bool = True, live: bool = True
) -> Stream[Event | LiveEvent]:
    """The events after sequence `after`: the journal's replayed, then (with `follow`) live ones.

    Following ends after the terminal status event. When the connection drops or the daemon
    restarts, it reconnects from the last sequence seen (backing off, for up to
    `reconnect_for` seconds), so the journal events come gapless and without duplicates.
    With `live`, display output past the output budget comes too, as `LiveEvent`s
    (`sequence` None); a `LiveEvent` of type `gap` says some display output was missed.
    """
    if not follow:
        while True:
            page = yield from events_page(client, execution, after)
            for journaled in page.events:
                yield Item(journaled)
            if page.terminal or page.next_after == after:
                return
            after = page.next_after
    yield from _follow(client, execution, after, live, None)


def _follow(
    client: Base, execution: ExecutionRef, after: int, live: bool, deadline: float | None
) -> Stream[Event | LiveEvent]:
    """The events after `after` from the stream, reconnecting as `events()` says; until the
    terminal event, or until `deadline` (a `time.monotonic()` value) when given."""
    state = client._follow(after, live)
    while True:
        error: Exception | None = None
        try:
            read_s = calls.STREAM_READ_S
            if deadline is not None:
                read_s = min(read_s, max(0.01, deadline - time.monotonic()))
            call = calls.stream(execution, state.last, read_s)
            response = yield Open(call)
            if response.status_code == 204:
                return  # reconnected after the terminal event: nothing more will come
            if response.status_code != 200:
                yield READ_BODY
                call.parse(response)  # raises: Unavailable is retried below, the others end it
            gap = state.connected()
            if gap is not None:
                yield Item(gap)
            reader = FrameReader()
            while (line := (yield NEXT_LINE)) is not None:
                frame = reader.line(line)
                event = state.take(frame) if frame is not None else None
                if event is not None:
                    yield Item(event)
                    if calls.is_last(event):
                        return
                if deadline is not None and time.monotonic() >= deadline:
                    return
        except BROKEN as exc:
            if deadline is not None and time.monotonic() >= deadline:
                return
            error = exc
        yield Sleep(state.broke(error))


@method
def artifacts(client: Base, execution: ExecutionRef) -> Plan[builtins.list[Artifact]]:
    """The artifacts kept for an execution (its whole stdout/stderr when they had to be kept)."""
    return (yield from send(client, calls.artifacts(execution))).artifacts


@method
def artifact(
    client: Base, execution: ExecutionRef, name: str, start: int = 0, end: int | None = None
) -> Plan[bytes]:
    """The bytes of artifact `name` from offset `start` up to `end` (exclusive; None: the end)."""
    return (yield from send(client, calls.artifact(execution, name, start, end)))


@method
def output(client: Base, execution: ExecutionRef, stream: StreamName = "stdout") -> Plan[bytes]:
    """Every byte the process wrote to `stream`, exactly: its artifact where one was kept (the
    output passed the event budget or was not UTF-8), else the text of its output events.

    Whole once the execution has ended; while it runs, what is journaled so far.
    """
    record = yield from get(client, execution)
    if any(a.name == stream for a in record.artifacts):
        return (yield from artifact(client, record, stream))
    parts: builtins.list[str] = []
    after = 0
    while True:
        page = yield from send(client, calls.events_page(record, after, 10_000))
        parts.extend(
            e.output_delta
            for e in page.events
            if e.event_type == "output" and e.stream == stream and e.output_delta
        )
        if page.terminal or page.next_after == after:
            return "".join(parts).encode("utf-8")
        after = page.next_after


@method
def images(client: Base) -> Plan[builtins.list[Image]]:
    """The images executions can run in."""
    return (yield from send(client, calls.images())).images


@method
def health(client: Base) -> Plan[Health]:
    """`GET /healthz`: answers once the daemon accepts work."""
    return (yield from send(client, calls.health()))


@method
def exits(
    client: Base, *, limit: int = 100, wait_timeout: float = 30.0, lease: float | None = None
) -> Plan[builtins.list[Exit]]:
    """Undelivered exits of detached executions, waiting up to `wait_timeout` s for one.

    Each exit handed out is hidden for `lease` seconds (the daemon's default when None), then
    handed out again until `ack_exit` is called with it.
    """
    return (yield from send(client, calls.exits(limit, wait_timeout, lease))).exits
