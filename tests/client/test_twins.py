"""`Client` and `AsyncClient` are made from one description of each method, so they cannot drift.

No daemon here: the description is read with `inspect`, plans are stepped by hand, and both twins
follow a scripted event stream through `httpx.MockTransport`.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import TOKEN
from workbench import AsyncClient, Client, Event, LiveEvent, Unavailable
from workbench.client import calls, plan
from workbench.client.base import Base
from workbench.client.plan import DESCRIBED

TWINS = (Client, AsyncClient)
#: What a twin has besides the described methods: how it is closed, and its daemon's URL.
OWN = {Client: {"close", "url", "files"}, AsyncClient: {"aclose", "url", "files"}}
RUN = "ex_01JD0000000000000000000000"


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_twins_have_the_described_methods_and_no_others() -> None:
    assert {"run_bash", "wait", "events", "list", "delete"} <= set(DESCRIBED)
    for twin in TWINS:
        assert public(twin) == set(DESCRIBED) | OWN[twin]


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_each_method_has_the_parameters_and_docstring_of_its_plan(name: str) -> None:
    described = DESCRIBED[name]
    client, *parameters = inspect.signature(described.plan).parameters.values()
    assert client.name == "client" and described.plan.__doc__
    for twin in TWINS:
        made = getattr(twin, name)
        signature = inspect.signature(made)
        assert list(signature.parameters) == ["self", *(p.name for p in parameters)]
        assert list(signature.parameters.values())[1:] == parameters
        assert made.__doc__ == described.plan.__doc__
        assert (made.__name__, made.__qualname__) == (name, f"{twin.__name__}.{name}")
    sync, aio = inspect.signature(getattr(Client, name)), inspect.signature(getattr(AsyncClient, name))
    assert sync.parameters == aio.parameters


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_each_method_is_blocking_or_awaited_as_its_twin_is(name: str) -> None:
    iterates = DESCRIBED[name].iterates
    sync, aio = getattr(Client, name), getattr(AsyncClient, name)
    result = plan.result_annotation(DESCRIBED[name].plan)[1]
    assert not inspect.iscoroutinefunction(sync) and inspect.isgeneratorfunction(sync) is iterates
    assert inspect.iscoroutinefunction(aio) is not iterates and inspect.isasyncgenfunction(aio) is iterates
    returns = (f"Iterator[{result}]", f"AsyncIterator[{result}]") if iterates else (result, result)
    assert (inspect.signature(sync).return_annotation, inspect.signature(aio).return_annotation) == returns
    hints = typing.get_type_hints(sync), typing.get_type_hints(aio)
    returned = [twin_hints.pop("return") for twin_hints in hints]
    assert hints[0] == hints[1]
    if iterates:
        assert [typing.get_origin(r) for r in returned] == [Iterator, AsyncIterator]
        returned = [typing.get_args(r)[0] for r in returned]
    assert returned[0] == returned[1]


def test_the_twins_are_set_up_alike() -> None:
    sync, aio = (inspect.signature(twin.__init__).parameters for twin in TWINS)
    assert list(sync) == list(aio)
    for name in sync:
        if name != "transport":  # a blocking transport for one, an async one for the other
            assert sync[name] == aio[name]


def test_a_driver_without_every_described_method_is_refused() -> None:
    namespace = {name: Client.__dict__[name] for name in DESCRIBED}
    namespace["events"] = Client.__dict__["events_page"]
    with pytest.raises(TypeError, match=r"Partial\.events is not made from its plan"):
        plan.driver(type("Partial", (Base,), namespace))
    assert Client.run_bash.__qualname__ == "Client.run_bash"


# -- plans stepped by hand ---------------------------------------------------------------------


def broken(message: str = "connection reset") -> httpx.ReadError:
    return httpx.ReadError(message, request=httpx.Request("GET", "http://daemon.test/"))


def test_a_broken_request_is_resent_after_the_pauses_then_unavailable() -> None:
    """Promise 8's other half: a request safe to resend is resent a few times, then it fails clearly."""
    client = Base("http://daemon.test", TOKEN, 30.0, 60.0)
    steps = plan.send(client, calls.get(RUN))
    assert next(steps) == plan.Request(calls.get(RUN))
    pauses = []
    for _ in plan.RESEND_DELAYS:
        step = steps.throw(broken())
        assert isinstance(step, plan.Sleep)
        pauses.append(step.seconds)
        assert next(steps) == plan.Request(calls.get(RUN))
    assert pauses == list(plan.RESEND_DELAYS)
    with pytest.raises(Unavailable, match=r"cannot reach the daemon at http://daemon\.test"):
        steps.throw(broken())


def test_a_request_that_timed_out_is_not_resent() -> None:
    steps = plan.send(Base("http://daemon.test", TOKEN, 30.0, 60.0), calls.get(RUN))
    next(steps)
    with pytest.raises(Unavailable):
        steps.throw(httpx.ReadTimeout("slow", request=httpx.Request("GET", "http://daemon.test/")))


# -- both twins following one scripted stream --------------------------------------------------


class Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body for either twin: some chunks, then optionally a broken connection."""

    def __init__(self, chunks: list[bytes], then: Exception | None = None) -> None:
        self.chunks, self.then, self.closes = chunks, then, 0

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.then is not None:
            raise self.then

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        if self.then is not None:
            raise self.then

    def close(self) -> None:
        self.closes += 1

    async def aclose(self) -> None:
        self.closes += 1


def frame(sequence: int, status: str = "running") -> bytes:
    data: dict[str, Any] = {"sequence": sequence, "status": status, "timestamp": "2026-01-01T00:00:00Z"}
    if status == "running":
        data.update(eventType="output", stream="stdout", outputDelta=f"line {sequence}\n")
    else:
        data.update(eventType="status", exitCode=0)
    return f"id: {sequence}\nevent: {data['eventType']}\ndata: {json.dumps(data)}\n\n".encode()


class Daemon:
    """Serves the event stream of one run: it breaks after event 2, then resends 2 before the rest."""

    def __init__(self) -> None:
        self.resumed_from: list[str] = []
        self.bodies: list[Body] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == f"/v1/executions/{RUN}/events/stream"
        self.resumed_from.append(request.headers["Last-Event-ID"])
        if len(self.bodies) == 0:
            body = Body([b": keepalive\n\n", frame(1), frame(2)], then=broken())
        else:
            body = Body([frame(2), frame(3), frame(4, "completed"), frame(5)])
        self.bodies.append(body)
        return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, stream=body)


def journal(events: list[Event | LiveEvent]) -> list[int | None]:
    return [event.sequence for event in events]


def test_the_blocking_twin_follows_a_broken_stream_gapless() -> None:
    """Promise 2: after a broken stream the client resumes after the last event it saw, no duplicate."""
    daemon = Daemon()
    with Client("http://daemon.test", TOKEN, transport=httpx.MockTransport(daemon)) as client:
        events = list(client.events(RUN))
    assert journal(events) == [1, 2, 3, 4] and daemon.resumed_from == ["0", "2"]
    assert [body.closes for body in daemon.bodies] == [1, 1]


async def test_the_async_twin_follows_a_broken_stream_gapless() -> None:
    """Promise 2, the same through `AsyncClient`."""
    daemon = Daemon()
    async with AsyncClient("http://daemon.test", TOKEN, transport=httpx.MockTransport(daemon)) as client:
        events = [event async for event in client.events(RUN)]
    assert journal(events) == [1, 2, 3, 4] and daemon.resumed_from == ["0", "2"]
    assert [body.closes for body in daemon.bodies] == [1, 1]


def test_leaving_the_blocking_iteration_closes_the_stream() -> None:
    """Promise 5: a client that stops reading closes its stream, and nothing else."""
    daemon = Daemon()
    with Client("http://daemon.test", TOKEN, transport=httpx.MockTransport(daemon)) as client:
        events = client.events(RUN, after=0)
        assert isinstance(events, Generator)
        assert next(events).sequence == 1
        assert daemon.bodies[0].closes == 0
        events.close()
    assert daemon.bodies[0].closes == 1 and daemon.resumed_from == ["0"]


async def test_closing_the_async_iteration_closes_the_stream() -> None:
    """Promise 5, through `AsyncClient`: `aclose()` reaches the stream under the iterator."""
    daemon = Daemon()
    async with AsyncClient("http://daemon.test", TOKEN, transport=httpx.MockTransport(daemon)) as client:
        events = client.events(RUN, after=0)
        assert isinstance(events, AsyncGenerator)
        assert (await anext(events)).sequence == 1
        assert daemon.bodies[0].closes == 0
        await events.aclose()
    assert daemon.bodies[0].closes == 1 and daemon.resumed_from == ["0"]
