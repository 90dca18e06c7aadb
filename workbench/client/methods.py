"""Every public method of `Client` and `AsyncClient`, written once: its signature, docstring and plan.

Each function here is a method of both clients with `client` in place of `self`; `Client` runs its
plan blocking and `AsyncClient` awaited (see `workbench.client.plan`). The requests themselves are
described in `workbench.client.calls`.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.client import calls
from workbench.client.base import Base
from workbench.client.calls import ExecutionRef
from workbench.client.config import seconds_to_ms
from workbench.client.plan import (
    BROKEN,
    NEXT_LINE,
    READ_BODY,
    Item,
    Open,
    Plan,
    Sleep,
    Stream,
    consume,
    iterator,
    method,
    send,
)
from workbench.client.sse import FrameReader
from workbench.wire.models import (
    Artifact,
    CancelResult,
    DetachResult,
    Event,
    EventPage,
    Execution,
    ExecutionKind,
    ExecutionList,
    Exit,
    Health,
    Image,
    LiveEvent,
    OnWaitTimeout,
    PreviewFormat,
    StreamName,
)
from workbench.wire.status import StatusName

#: A callback of `run_bash`/`run_code` that takes each piece of a stream's text as it comes.
Output = Callable[[str], object]

# -- starting ---------------------------------------------------------------------------------


@method
def run_bash(
    client: Base,
    command: str,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    metadata: Any = None,
    image: str | None = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
    preview_bytes: int | None = None,
    preview_format: PreviewFormat | None = None,
    on_wait_timeout: OnWaitTimeout = "return",
    on_stdout: Output | None = None,
    on_stderr: Output | None = None,
    secret_env: Mapping[str, str] | None = None,
    open_stdin: bool = False,
    tty: bool | tuple[int, int] = False,
    persist_shell: bool = False,
) -> Plan[Execution]:
    """Start `command` (run by bash) and return its record.

    With `background=True` the record comes back at once (`queued` or `running`). Otherwise
    this waits for the end: for `wait_timeout` seconds if given (the record may then not be
    terminal yet), else as long as it runs. `timeout` is the execution's deadline in seconds
    (from acceptance), `idle_timeout` ends it when it prints nothing for that long. The same
    `idempotency_key` never runs a command twice. `secret_env` is passed like `env` but never
    returned or stored: the record lists only its names.

    `cwd` is an absolute directory; by default the session's workspace
    (`<data dir>/workspaces/<principal>/<session>`, kept from one command to the next).
    The record's `preview` holds the head and tail of its output (`preview_bytes` each, default
    16384; `preview_format="plain"` as a terminal shows it). When `wait_timeout` passes first,
    `on_wait_timeout` says what then: `"return"` the record (the run goes on), `"detach"` it
    (its outcome goes to the exits feed) or `"cancel"` it. `on_stdout` and `on_stderr` are
    called with each piece of that stream's text as it is written (a foreground start then
    follows the event stream instead of waiting); they should not block.

    `open_stdin=True` keeps its stdin open for `send_input` (instead of `stdin` text); `tty=True`
    (or `(rows, cols)`) runs it on a terminal, whose output is the one stdout stream.
    `persist_shell=True` starts it in the directory and with the exported variables the last
    such command of its session left, as a terminal's shell would.
    """
    body = calls.start_body(
        background=background,
        wait_timeout=wait_timeout,
        timeout=timeout,
        idle_timeout=idle_timeout,
        cwd=cwd,
        env=env,
        stdin=stdin,
        metadata=metadata,
        image=image,
        session_id=session_id,
        detached=detached,
        preview_bytes=preview_bytes,
        preview_format=preview_format,
        on_wait_timeout=on_wait_timeout,
        secret_env=secret_env,
        open_stdin=open_stdin,
        tty=tty,
        persist_shell=persist_shell,
    )
    body = {"command": command, **body}
    output = _outputs(on_stdout, on_stderr)
    return (yield from _start(client, "workbench_bash", body, idempotency_key, wait_timeout, output))


@method
def run_code(
    client: Base,
    language: str,
    code: str,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    metadata: Any = None,
    image: str | None = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
    preview_bytes: int | None = None,
    preview_format: PreviewFormat | None = None,
    on_wait_timeout: OnWaitTimeout = "return",
    on_stdout: Output | None = None,
    on_stderr: Output | None = None,
    secret_env: Mapping[str, str] | None = None,
    open_stdin: bool = False,
    tty: bool | tuple[int, int] = False,
) -> Plan[Execution]:
    """Run `code` in `language` (`python`, `bash`, `sh`, ... as the image has them); as `run_bash`."""
    body = calls.start_body(
        background=background,
        wait_timeout=wait_timeout,
        timeout=timeout,
        idle_timeout=idle_timeout,
        cwd=cwd,
        env=env,
        stdin=stdin,
        metadata=metadata,
        image=image,
        session_id=session_id,
        detached=detached,
        preview_bytes=preview_bytes,
        preview_format=preview_format,
        on_wait_timeout=on_wait_timeout,
        secret_env=secret_env,
        open_stdin=open_stdin,
        tty=tty,
    )
    body = {"language": language, "code": code, **body}
    output = _outputs(on_stdout, on_stderr)
    return (yield from _start(client, "workbench_code", body, idempotency_key, wait_timeout, output))


def _outputs(on_stdout: Output | None, on_stderr: Output | None) -> dict[str, Output] | None:
    given = {"stdout": on_stdout, "stderr": on_stderr}
    return {name: fn for name, fn in given.items() if fn is not None} or None


@method
def run_batch(
    client: Base,
    items: Sequence[Mapping[str, Any]],
    *,
    concurrency: int | None = None,
    fail_fast: bool = False,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    metadata: Any = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
) -> Plan[Execution]:
    """Start a batch of executions, accepted all or none, and return the batch's record.

    Each item is a start body as the API takes it, with its `kind`: `{"kind": "workbench_bash",
    "command": "make"}` or `{"kind": "workbench_code", "language": "python", "code": "..."}`,
    and any other start field (`cwd`, `env`, `timeoutMs`, ...). At most `concurrency` run at
    once; with `fail_fast` the first item that does not complete cancels the rest. The batch
    ends `completed`, `failed`, `partial_failed`, `cancelled` or `timed_out` (`timeout`: its
    deadline in seconds, which no item outlives). Waits like `run_bash`.
    """
    body: dict[str, Any] = {"items": [dict(item) for item in items], "background": background}
    if not background:
        body["waitTimeoutMs"] = seconds_to_ms(
            calls.MAX_WAIT_S if wait_timeout is None else min(wait_timeout, calls.MAX_WAIT_S)
        )
    optional = {
        "concurrency": concurrency,
        "timeoutMs": seconds_to_ms(timeout),
        "metadata": metadata,
        "sessionId": session_id,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if fail_fast:
        body["failFast"] = True
    if detached:
        body["detached"] = True
    return (yield from _started(client, calls.batch(body, idempotency_key), background, wait_timeout))


@method
def rerun(
    client: Base,
    execution: ExecutionRef,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    command: str | None = None,
    code: str | None = None,
    timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    secret_env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    image: str | None = None,
    session_id: str | None = None,
    idempotency_key: str | None = None,
) -> Plan[Execution]:
    """Start a new execution with the same spec as `execution` (its stdin too) and return it.

    Each argument given replaces the original's; `secret_env` must give again the values of
    the original's `secret_env_names` (they are never kept). The new record's `rerun_of` names
    the original. Waits like `run_bash`.
    """
    body: dict[str, Any] = {"background": background}
    if not background:
        body["waitTimeoutMs"] = seconds_to_ms(
            calls.MAX_WAIT_S if wait_timeout is None else min(wait_timeout, calls.MAX_WAIT_S)
        )
    optional = {
        "command": command,
        "code": code,
        "timeoutMs": seconds_to_ms(timeout),
        "cwd": cwd,
        "env": dict(env) if env is not None else None,
        "secretEnv": dict(secret_env) if secret_env else None,
        "stdin": stdin,
        "image": image,
        "sessionId": session_id,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    call = calls.rerun(execution, body, idempotency_key)
    return (yield from _started(client, call, background, wait_timeout))


def _started(
    client: Base, call: calls.Call[Execution], background: bool, wait_timeout: float | None
) -> Plan[Execution]:
    began = time.monotonic()
    execution = yield from send(client, call)
    if background or execution.terminal:
        return execution
    left = None if wait_timeout is None else wait_timeout - (time.monotonic() - began)
    if left is not None and left <= 0:
        return execution
    return (yield from wait(client, execution, timeout=left))


def _start(
    client: Base,
    kind: str,
    body: dict[str, Any],
    key: str | None,
    wait_timeout: float | None,
    output: dict[str, Output] | None,
) -> Plan[Execution]:
    began = time.monotonic()
    if output is not None and not body["background"]:
        return (yield from _start_following(client, kind, body, key, wait_timeout, output))
    execution = yield from send(client, calls.start(kind, body, key))
    # The daemon has done what `onWaitTimeout` asked for when its wait passed.
    if body["background"] or execution.terminal or "onWaitTimeout" in body:
        return execution
    # The start's long-poll is capped (`MAX_WAIT_S`): an unfinished run may still have time left.
    left = None if wait_timeout is None else wait_timeout - (time.monotonic() - began)
    if left is not None and left <= 0:
        return execution
    return (yield from wait(client, execution, timeout=left))


def _start_following(
    client: Base,
    kind: str,
    body: dict[str, Any],
    key: str | None,
    wait_timeout: float | None,
    output: dict[str, Output],
) -> Plan[Execution]:
    """A foreground start whose output is handed to callbacks as it comes: started in the
    background and followed on the event stream, within `wait_timeout`, then `onWaitTimeout`."""
    began = time.monotonic()
    action = body.get("onWaitTimeout", "return")
    background = {k: v for k, v in body.items() if k not in ("waitTimeoutMs", "onWaitTimeout")}
    execution = yield from send(client, calls.start(kind, {**background, "background": True}, key))
    deadline = None if wait_timeout is None else began + wait_timeout
    ended = False

    def take(event: Event | LiveEvent) -> bool:
        nonlocal ended
        if event.event_type == "output" and event.output_delta and event.stream in output:
            output[event.stream](event.output_delta)
        ended = calls.is_last(event)
        return True

    yield from consume(_follow(client, execution, 0, True, deadline), take)
    if not ended and action == "detach":
        detached = yield from detach(client, execution)
        if detached.execution is not None:
            return detached.execution
    elif not ended and action == "cancel":
        yield from cancel(client, execution, "the wait passed (on_wait_timeout: cancel)")
        return (yield from wait(client, execution))
    return (yield from get(client, execution))


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
def wait(client: Base, execution: ExecutionRef, timeout: float | None = None) -> Plan[Execution]:
    """Wait for the end, at most `timeout` seconds (None: as long as it runs); the record then.

    A wait that times out returns the record as it is (check `.terminal`) and changes nothing.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = calls.MAX_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
        result = yield from send(client, calls.wait_once(execution, left))
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


# -- changing ---------------------------------------------------------------------------------


@method
def ack_exit(client: Base, delivery: Exit | str) -> Plan[None]:
    """Mark an exit delivered: it is never handed out again."""
    delivery_id = delivery.delivery_id if isinstance(delivery, Exit) else delivery
    yield from send(client, calls.ack_exit(delivery_id))


@method
def cancel(
    client: Base, execution: ExecutionRef, reason: str | None = None, *, grace: float | None = None
) -> Plan[CancelResult]:
    """Cancel: kill the whole tree (SIGTERM and `grace` seconds first, when given).

    `cancelled` is False when it had already ended; its outcome then stands.
    """
    return (yield from send(client, calls.cancel(execution, reason, grace)))


@method
def detach(client: Base, execution: ExecutionRef) -> Plan[DetachResult]:
    """Hand the outcome to the exits feed (or get the record if it had already ended)."""
    return (yield from send(client, calls.detach(execution)))


@method
def delete(client: Base, execution: ExecutionRef) -> Plan[None]:
    """Dispose of an ended execution and its files; Conflict while it runs."""
    yield from send(client, calls.delete(execution))
