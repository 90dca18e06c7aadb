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
the caller passes none), so a resent start never runs the command twice; deletes too, a resend
that finds the thing gone counting as done. `create_context` (which takes no key) is not resent.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from workbench.client import interactive, methods, reading, retention
from workbench.client import sessions as sessions_module
from workbench.client.aio import AsyncClient
from workbench.client.base import Base
from workbench.client.calls import ClientClosed, ExecutionRef
from workbench.client.contexts import CodeContext, create_plan, list_plan
from workbench.client.files_handles import Files
from workbench.client.plan import (
    Item,
    NextLine,
    Open,
    Plan,
    ReadBody,
    Request,
    Sleep,
    Step,
    Stream,
    dress,
    driver,
)

__all__ = ["AsyncClient", "Client", "ExecutionRef"]

P = ParamSpec("P")
T = TypeVar("T")


def _returning(plan: Callable[Concatenate[Base, P], Plan[T]]) -> Callable[Concatenate[Client, P], T]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(plan(self, *args, **kwargs))

    return dress(method, plan)


def _iterating(
    plan: Callable[Concatenate[Base, P], Stream[T]],
) -> Callable[Concatenate[Client, P], Iterator[T]]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        yield from self._iterate(plan(self, *args, **kwargs))

    return dress(method, plan, Iterator)


@driver
class Client(Base):
    """A blocking client of one daemon. Use it as a context manager, or call `close()`.

    Args:
        url: the daemon (default `$WORKBENCH_URL`, else `http://127.0.0.1:8787`); `unix:///x.sock`
            for a Unix socket.
        token: the bearer token (default `$WORKBENCH_TOKEN`, else `<data dir>/token`).
        timeout: seconds to wait for the daemon on ordinary requests (long-polls get their own).
        reconnect_for: how long `events()` keeps reconnecting to a daemon that went away.
        transport: an httpx transport to use instead of the network (for tests).
        ca_file: a CA certificate (PEM) to verify an `https://` daemon against (default
            `$WORKBENCH_TLS_CA`, else the system's certificate store).
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        reconnect_for: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        ca_file: str | None = None,
    ) -> None:
        super().__init__(url, token, timeout, reconnect_for, ca_file)
        target = self._target
        if transport is None and target.socket_path is not None:
            transport = httpx.HTTPTransport(uds=target.socket_path)
        self._http = httpx.Client(
            base_url=target.base_url,
            headers=target.headers(),
            timeout=timeout,
            transport=transport,
            verify=self._verify(),
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

    # -- the methods, each made from its plan in workbench.client.methods -----------------------

    run_bash = _returning(methods.run_bash)
    run_code = _returning(methods.run_code)
    run_batch = _returning(methods.run_batch)
    rerun = _returning(methods.rerun)
    get = _returning(reading.get)
    list = _returning(reading.list)
    list_page = _returning(reading.list_page)
    wait = _returning(reading.wait)
    events_page = _returning(reading.events_page)
    events = _iterating(reading.events)
    artifacts = _returning(reading.artifacts)
    artifact = _returning(reading.artifact)
    output = _returning(reading.output)
    images = _returning(reading.images)
    health = _returning(reading.health)
    exits = _returning(reading.exits)
    ack_exit = _returning(methods.ack_exit)
    cancel = _returning(methods.cancel)
    detach = _returning(methods.detach)
    delete = _returning(methods.delete)
    send_input = _returning(interactive.send_input)
    resize = _returning(interactive.resize)
    signal = _returning(interactive.signal)
    prune = _returning(retention.prune)
    stats = _returning(retention.stats)
    sessions = _returning(sessions_module.sessions)
    delete_session = _returning(sessions_module.delete_session)
    delete_sessions = _returning(sessions_module.delete_sessions)

    def files(self, session_id: str = "default") -> Files:
        """The files of the session `session_id`'s workspace: `read`, `write`, `list`, `delete`,
        `move`, `upload`, `download` and `watch` (see `workbench.client.files`)."""
        return Files(self, session_id)

    def create_context(
        self,
        language: str = "python",
        *,
        image: str | None = None,
        session_id: str | None = None,
        env: dict[str, str] | None = None,
        idle_timeout: float | None = None,
    ) -> CodeContext:
        """Start a code context: an interpreter whose names persist between `ctx.run(code)`
        calls, killed by `ctx.close()` (or after `idle_timeout` seconds idle)."""
        record = self._run(create_plan(self, language, image, session_id, env, idle_timeout))
        return CodeContext(self, record)

    def contexts(self) -> builtins.list[CodeContext]:
        """The principal's code contexts, oldest first."""
        return [CodeContext(self, record) for record in self._run(list_plan(self))]

    # -- performing a plan's steps --------------------------------------------------------------

    def _run(self, plan: Plan[T]) -> T:
        self._check_open()
        with closing(plan), _Streams(self) as streams:
            reply: Any = None
            broke: httpx.TransportError | None = None
            while True:
                try:
                    step = plan.send(reply) if broke is None else plan.throw(broke)
                except StopIteration as done:
                    result: T = done.value
                    return result
                reply, broke = None, None
                if isinstance(step, Item):
                    raise TypeError(f"a method's plan handed out {step!r}")
                try:
                    reply = streams.perform(step)
                except httpx.TransportError as exc:
                    broke = exc

    def _iterate(self, plan: Stream[T]) -> Iterator[T]:
        self._check_open()
        with closing(plan), _Streams(self) as streams:
            reply: Any = None
            broke: httpx.TransportError | None = None
            while True:
                try:
                    step = plan.send(reply) if broke is None else plan.throw(broke)
                except StopIteration:
                    return
                reply, broke = None, None
                if isinstance(step, Item):
                    yield step.value
                    continue
                try:
                    reply = streams.perform(step)
                except httpx.TransportError as exc:
                    broke = exc

    def _check_open(self) -> None:
        if self._http.is_closed:
            raise ClientClosed("this Client is closed: its connections are gone; make another")

    def _perform(self, step: Step) -> Any:
        match step:
            case Request(call):
                return self._http.request(call.method, call.path, **self._request_args(call))
            case Sleep(seconds):
                time.sleep(seconds)
                return None
        raise TypeError(f"a method's plan asked for {step!r}")


class _Streams:
    """Performs a plan's steps, holding the stream it opened (at most one at a time)."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._held = ExitStack()
        self._response: httpx.Response | None = None
        self._lines: Iterator[str] | None = None

    def __enter__(self) -> _Streams:
        return self

    def __exit__(self, *exc: object) -> None:
        self._held.close()

    def perform(self, step: Step) -> Any:
        """The outcome of `step`; a broken stream is dropped before its error is raised."""
        try:
            match step:
                case Open(call):
                    self._held.close()
                    http = self._client._http
                    self._response = self._held.enter_context(
                        http.stream(call.method, call.path, **self._client._request_args(call))
                    )
                    self._lines = self._response.iter_lines()
                    close = getattr(self._lines, "close", None)
                    if close is not None:
                        self._held.callback(close)
                    return self._response
                case NextLine():
                    assert self._lines is not None, "a plan reads only the stream it opened"
                    return next(self._lines, None)
                case ReadBody():
                    assert self._response is not None, "a plan reads only the stream it opened"
                    self._response.read()
                    return None
            return self._client._perform(step)
        except httpx.TransportError:
            self._held.close()
            raise
