"""The async twin of `Client` (see `workbench.client`): the same methods, awaited, on trio or asyncio."""

from __future__ import annotations

import builtins
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from contextlib import AsyncExitStack, aclosing, closing
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio
import httpx

from workbench.client import interactive, methods, reading, retention
from workbench.client import sessions as sessions_module
from workbench.client.base import Base
from workbench.client.calls import ClientClosed
from workbench.client.contexts import AsyncCodeContext, create_plan, list_plan
from workbench.client.files_handles import AsyncFiles
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

__all__ = ["AsyncClient"]

P = ParamSpec("P")
T = TypeVar("T")


def _returning(
    plan: Callable[Concatenate[Base, P], Plan[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(plan(self, *args, **kwargs))

    return dress(method, plan)


def _iterating(
    plan: Callable[Concatenate[Base, P], Stream[T]],
) -> Callable[Concatenate[AsyncClient, P], AsyncGenerator[T, None]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> AsyncGenerator[T, None]:
        # There is no async `yield from`: closing this generator must close the one it follows.
        async with aclosing(self._iterate(plan(self, *args, **kwargs))) as items:
            async for item in items:
                yield item

    return dress(method, plan, AsyncIterator)


@driver
class AsyncClient(Base):
    """An async client of one daemon, on trio or asyncio. Use `async with`, or call `aclose()`.

    Its methods are those of `Client`, awaited; `events()` is an async iterator.

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
        transport: httpx.AsyncBaseTransport | None = None,
        ca_file: str | None = None,
    ) -> None:
        super().__init__(url, token, timeout, reconnect_for, ca_file)
        target = self._target
        if transport is None and target.socket_path is not None:
            transport = httpx.AsyncHTTPTransport(uds=target.socket_path)
        self._http = httpx.AsyncClient(
            base_url=target.base_url,
            headers=target.headers(),
            timeout=timeout,
            transport=transport,
            verify=self._verify(),
        )

    async def aclose(self) -> None:
        """Close the connections. Executions are not touched."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

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

    def files(self, session_id: str = "default") -> AsyncFiles:
        """The files of the session `session_id`'s workspace: `read`, `write`, `list`, `delete`,
        `move`, `upload`, `download` and `watch` (see `workbench.client.files`)."""
        return AsyncFiles(self, session_id)

    async def create_context(
        self,
        language: str = "python",
        *,
        image: str | None = None,
        session_id: str | None = None,
        env: dict[str, str] | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncCodeContext:
        """Start a code context; as `Client.create_context`."""
        record = await self._run(create_plan(self, language, image, session_id, env, idle_timeout))
        return AsyncCodeContext(self, record)

    async def contexts(self) -> builtins.list[AsyncCodeContext]:
        """The principal's code contexts, oldest first."""
        return [AsyncCodeContext(self, record) for record in await self._run(list_plan(self))]

    # -- performing a plan's steps --------------------------------------------------------------

    async def _run(self, plan: Plan[T]) -> T:
        self._check_open()
        with closing(plan):
            async with _Streams(self) as streams:
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
                        reply = await streams.perform(step)
                    except httpx.TransportError as exc:
                        broke = exc

    async def _iterate(self, plan: Stream[T]) -> AsyncGenerator[T, None]:
        self._check_open()
        with closing(plan):
            async with _Streams(self) as streams:
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
                        reply = await streams.perform(step)
                    except httpx.TransportError as exc:
                        broke = exc

    def _check_open(self) -> None:
        if self._http.is_closed:
            raise ClientClosed("this AsyncClient is closed: its connections are gone; make another")

    async def _perform(self, step: Step) -> Any:
        match step:
            case Request(call):
                return await self._http.request(call.method, call.path, **self._request_args(call))
            case Sleep(seconds):
                await anyio.sleep(seconds)
                return None
        raise TypeError(f"a method's plan asked for {step!r}")


class _Streams:
    """Performs a plan's steps, holding the stream it opened (at most one at a time)."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._held = AsyncExitStack()
        self._response: httpx.Response | None = None
        self._lines: AsyncIterator[str] | None = None

    async def __aenter__(self) -> _Streams:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._held.aclose()

    async def perform(self, step: Step) -> Any:
        """The outcome of `step`; a broken stream is dropped before its error is raised."""
        try:
            match step:
                case Open(call):
                    await self._held.aclose()
                    http = self._client._http
                    self._response = await self._held.enter_async_context(
                        http.stream(call.method, call.path, **self._client._request_args(call))
                    )
                    self._lines = self._response.aiter_lines()
                    self._held.push_async_callback(_finish, self._response, self._lines)
                    return self._response
                case NextLine():
                    assert self._lines is not None, "a plan reads only the stream it opened"
                    return await anext(self._lines, None)
                case ReadBody():
                    assert self._response is not None, "a plan reads only the stream it opened"
                    await self._response.aread()
                    return None
            return await self._client._perform(step)
        except httpx.TransportError:
            await self._held.aclose()
            raise


async def _finish(response: httpx.Response, lines: AsyncIterator[str]) -> None:
    """End the line reader of `response` and the readers under it (httpx's are async generators,
    one inside the other): left unfinished to the garbage collector, each warns on trio
    (ResourceWarning). Closing the outer one would leave the inner ones so; reading on once the
    response is closed ends them all, with the closed stream's error or at once."""
    await response.aclose()
    try:
        async for _ in lines:
            pass
    except Exception:  # what reading a closed stream raises, or the error that broke it
        pass
