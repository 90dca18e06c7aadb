"""The Python client: `Client` (blocking) and `AsyncClient` (async, on trio or asyncio), the same methods.

    from workbench import Client

    with Client() as wb:                       # URL and token found as the CLI finds them
        run = wb.run_bash("make test", background=True, timeout=600)
        for event in wb.events(run):           # replays, then follows; reconnects by itself
            if event.event_type == "output":
                print(event.output_delta, end="")
        result = wb.wait(run)                  # an Execution: result.status, result.exit_code

Results are the pydantic models of `workbench.wire.models` (snake_case attributes). Every failure is a
`workbench.WorkbenchError` subclass named after the API's error code (`NotFound`, `InvalidRequest`,
`Unauthorized`, ...); a daemon that cannot be reached is `Unavailable`. Times are in seconds.
A broken keep-alive connection is reopened and a request that is safe to resend is resent: reads
always, and starts because the client gives each start an `Idempotency-Key` (a fresh one when
the caller passes none), so a resent start never runs the command twice.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from workbench.client import calls
from workbench.client.aio import AsyncClient
from workbench.client.base import BROKEN, Base
from workbench.client.calls import Call, ExecutionRef
from workbench.client.sse import FrameReader
from workbench.wire.models import (
    Artifact,
    CancelResult,
    DetachResult,
    Event,
    EventPage,
    Execution,
    ExecutionList,
    Exit,
    Health,
    Image,
    LiveEvent,
)

__all__ = ["AsyncClient", "Client", "ExecutionRef"]

T = TypeVar("T")


class Client(Base):
    """A blocking client of one daemon. Use it as a context manager, or call `close()`.

    Args:
        url: the daemon (default `$WORKBENCH_URL`, else `http://127.0.0.1:8787`); `unix:///x.sock`
            for a Unix socket.
        token: the bearer token (default `$WORKBENCH_TOKEN`, else `<data dir>/token`).
        timeout: seconds to wait for the daemon on ordinary requests (long-polls get their own).
        reconnect_for: how long `events()` keeps reconnecting to a daemon that went away.
        transport: an httpx transport to use instead of the network (for tests).
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        reconnect_for: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, token, timeout, reconnect_for)
        target = self._target
        if transport is None and target.socket_path is not None:
            transport = httpx.HTTPTransport(uds=target.socket_path)
        self._http = httpx.Client(
            base_url=target.base_url, headers=target.headers(), timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the connections. Executions are not touched."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, **self._request_args(call))
            except httpx.TransportError as exc:
                attempt += 1
                time.sleep(self._resend_delay(call, attempt, exc))
                continue
            return call.parse(response)

    # -- starting ---------------------------------------------------------------------------

    def run_bash(
        self,
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
    ) -> Execution:
        """Start `command` (run by bash) and return its record.

        With `background=True` the record comes back at once (`queued` or `running`). Otherwise
        this waits for the end: for `wait_timeout` seconds if given (the record may then not be
        terminal yet), else as long as it runs. `timeout` is the execution's deadline in seconds
        (from acceptance), `idle_timeout` ends it when it prints nothing for that long. The same
        `idempotency_key` never runs a command twice.
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
        )
        return self._start("workbench_bash", {"command": command, **body}, idempotency_key, wait_timeout)

    def run_code(
        self,
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
    ) -> Execution:
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
        )
        body = {"language": language, "code": code, **body}
        return self._start("workbench_code", body, idempotency_key, wait_timeout)

    def _start(
        self, kind: str, body: dict[str, Any], key: str | None, wait_timeout: float | None
    ) -> Execution:
        began = time.monotonic()
        execution = self._send(calls.start(kind, body, key))
        if body["background"] or execution.terminal:
            return execution
        left = None if wait_timeout is None else wait_timeout - (time.monotonic() - began)
        if left is not None and left <= 0:
            return execution
        return self.wait(execution, timeout=left)

    # -- reading ----------------------------------------------------------------------------

    def get(self, execution: ExecutionRef) -> Execution:
        """The current record. Raises NotFound for an unknown id (or another principal's)."""
        return self._send(calls.get(execution))

    def list(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
    ) -> builtins.list[Execution]:
        """Up to `limit` executions, newest first, following the pages as needed."""
        out: builtins.list[Execution] = []
        cursor: str | None = None
        while len(out) < limit:
            page = self.list_page(
                status=status,
                kind=kind,
                session_id=session_id,
                limit=min(1000, limit - len(out)),
                cursor=cursor,
            )
            out.extend(page.executions)
            cursor = page.next_cursor
            if cursor is None:
                break
        return out

    def list_page(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> ExecutionList:
        """One page of the listing; pass its `next_cursor` back as `cursor` for the next."""
        return self._send(
            calls.list_page(status=status, kind=kind, session_id=session_id, limit=limit, cursor=cursor)
        )

    def wait(self, execution: ExecutionRef, timeout: float | None = None) -> Execution:
        """Wait for the end, at most `timeout` seconds (None: as long as it runs); the record then.

        A wait that times out returns the record as it is (check `.terminal`) and changes nothing.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = calls.MAX_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
            result = self._send(calls.wait_once(execution, left))
            if not result.wait_timed_out or (deadline is not None and time.monotonic() >= deadline):
                return result.execution

    def events_page(self, execution: ExecutionRef, after: int = 0, limit: int = 1000) -> EventPage:
        """One page of journal events after sequence `after`."""
        return self._send(calls.events_page(execution, after, limit))

    def events(
        self, execution: ExecutionRef, *, after: int = 0, follow: bool = True, live: bool = True
    ) -> Iterator[Event | LiveEvent]:
        """The events after sequence `after`: the journal's replayed, then (with `follow`) live ones.

        Following ends after the terminal status event. When the connection drops or the daemon
        restarts, it reconnects from the last sequence seen (backing off, for up to
        `reconnect_for` seconds), so the journal events come gapless and without duplicates.
        With `live`, display output past the output budget comes too, as `LiveEvent`s
        (`sequence` None); a `LiveEvent` of type `gap` says some display output was missed.
        """
        if not follow:
            while True:
                page = self.events_page(execution, after)
                yield from page.events
                if page.terminal or page.next_after == after:
                    return
                after = page.next_after
        state = self._follow(after, live)
        while True:
            error: Exception | None = None
            try:
                with self._http.stream(
                    "GET",
                    calls.stream_path(execution),
                    headers=state.headers(),
                    timeout=self._stream_timeout(),
                ) as response:
                    if response.status_code != 200:
                        response.read()
                        raise calls.error_from(response)  # Unavailable is retried below; others end it
                    gap = state.connected()
                    if gap is not None:
                        yield gap
                    reader = FrameReader()
                    for line in response.iter_lines():
                        frame = reader.line(line)
                        event = state.take(frame) if frame is not None else None
                        if event is None:
                            continue
                        yield event
                        if calls.is_last(event):
                            return
            except BROKEN as exc:
                error = exc
            time.sleep(state.broke(error))

    def artifacts(self, execution: ExecutionRef) -> builtins.list[Artifact]:
        """The artifacts kept for an execution (its whole stdout/stderr when they had to be kept)."""
        return self._send(calls.artifacts(execution)).artifacts

    def artifact(self, execution: ExecutionRef, name: str, start: int = 0, end: int | None = None) -> bytes:
        """The bytes of artifact `name` from offset `start` up to `end` (exclusive; None: the end)."""
        return self._send(calls.artifact(execution, name, start, end))

    def images(self) -> builtins.list[Image]:
        """The images executions can run in."""
        return self._send(calls.images()).images

    def health(self) -> Health:
        """`GET /healthz`: answers once the daemon accepts work."""
        return self._send(calls.health())

    def exits(
        self, *, limit: int = 100, wait_timeout: float = 30.0, lease: float | None = None
    ) -> builtins.list[Exit]:
        """Undelivered exits of detached executions, waiting up to `wait_timeout` s for one.

        Each exit handed out is hidden for `lease` seconds (the daemon's default when None), then
        handed out again until `ack_exit` is called with it.
        """
        return self._send(calls.exits(limit, wait_timeout, lease)).exits

    # -- changing ---------------------------------------------------------------------------

    def ack_exit(self, delivery: Exit | str) -> None:
        """Mark an exit delivered: it is never handed out again."""
        self._send(calls.ack_exit(delivery.delivery_id if isinstance(delivery, Exit) else delivery))

    def cancel(
        self, execution: ExecutionRef, reason: str | None = None, *, grace: float | None = None
    ) -> CancelResult:
        """Cancel: kill the whole tree (SIGTERM and `grace` seconds first, when given).

        `cancelled` is False when it had already ended; its outcome then stands.
        """
        return self._send(calls.cancel(execution, reason, grace))

    def detach(self, execution: ExecutionRef) -> DetachResult:
        """Hand the outcome to the exits feed (or get the record if it had already ended)."""
        return self._send(calls.detach(execution))

    def delete(self, execution: ExecutionRef) -> None:
        """Dispose of an ended execution and its files; Conflict while it runs."""
        self._send(calls.delete(execution))
