"""How a method of the clients is written once for both: a plan, a generator of I/O steps.

A plan does no I/O itself. It yields a step (send this request, sleep, open a stream, read a line
of it) and is resumed with the step's outcome; when a step breaks the connection, the error is
thrown into the plan instead, so resending and reconnecting are decided in the plan, once. An
iterator method's plan also yields, as `Item`s, what its caller iterates. `Client` performs the
steps with `httpx.Client` and `time.sleep`, `AsyncClient` with `httpx.AsyncClient` and
`anyio.sleep`: the way psycopg 3 drives one libpq generator by `wait()` and by `wait_async()`.

`workbench.client.methods` registers each plan with `@method` or `@iterator`; a driver makes its
methods from them with `dress()` and checks with `@driver` that it has every one of them.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

import httpx

from workbench.client import calls
from workbench.client.base import Base
from workbench.client.calls import Call
from workbench.wire.errors import NotFound, Unavailable, WorkbenchError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

#: Pauses before each resend of a request whose connection broke (then it fails).
RESEND_DELAYS = (0.0, 0.1, 0.5)

#: What ends an attempt to follow a stream, to be tried again: a broken connection, or a daemon
#: that answered `unavailable`.
BROKEN = (httpx.TransportError, Unavailable)

#: A broken connection whose request never left: no connection was made.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


@dataclass(frozen=True, slots=True)
class Request:
    """Send `call`. Resumed with its response, read in full."""

    call: Call[Any]


@dataclass(frozen=True, slots=True)
class Sleep:
    """Pause. Resumed with None."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Open:
    """Open `call` as the plan's stream, in place of the one before. Resumed with its response.

    The driver closes the stream when it breaks (before throwing the error in), when the plan
    ends, and when its caller stops iterating; httpx closes it once it is read to its end.
    """

    call: Call[httpx.Response]


@dataclass(frozen=True, slots=True)
class ReadBody:
    """Read the rest of the stream, so that its response can be parsed. Resumed with None."""


@dataclass(frozen=True, slots=True)
class NextLine:
    """Read a line of the stream. Resumed with it (without its line ending), or None at its end."""


@dataclass(frozen=True, slots=True)
class Item(Generic[T]):
    """Hand `value` to the caller iterating the plan's method. Resumed with None when it asks for more."""

    value: T


Step = Request | Sleep | Open | ReadBody | NextLine
READ_BODY = ReadBody()
NEXT_LINE = NextLine()

#: A method's plan: steps to perform, then its result.
Plan: TypeAlias = Generator[Step, Any, T]
#: An iterator method's plan: steps to perform, and between them the items to hand out. (Items are
#: wrapped so that mypy infers `T` as the union of their types, not as the base class they share.)
Stream: TypeAlias = Generator[Step | Item[T], Any, None]


def send(client: Base, call: Call[T]) -> Plan[T]:
    """The answer to `call`, resent after a broken connection while resending is safe.

    A delete (`call.deletes`) is resent too; when a resend finds it gone, a try whose answer
    was lost did it: its parse is then given the answer of that try (204), not the NotFound. Only
    a try that may have reached the daemon counts: one whose connection was never made (refused,
    timed out connecting) deleted nothing.
    An answer that is not what the call expects raises a WorkbenchError, as the API's errors do.
    """
    attempt = 0
    sent = False  # a try may have reached the daemon
    while True:
        try:
            response: httpx.Response = yield Request(call)
        except httpx.TransportError as exc:
            attempt += 1
            sent = sent or not isinstance(exc, NOT_SENT)
            if not call.retry or attempt > len(RESEND_DELAYS) or isinstance(exc, httpx.TimeoutException):
                raise calls.unreachable(client.url, exc) from exc
            yield Sleep(RESEND_DELAYS[attempt - 1])
            continue
        try:
            return call.parse(response)
        except NotFound:
            if not (call.deletes and sent):
                raise
            return call.parse(httpx.Response(204, request=response.request))
        except WorkbenchError:
            raise
        except (ValueError, KeyError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            raise calls.unexpected(response, exc) from exc


def consume(stream: Stream[T], take: Callable[[T], bool]) -> Plan[None]:
    """Perform the steps of an iterator method's plan as this plan's own, handing each of its
    items to `take`; stops when `take` says False or the stream ends."""
    with closing(stream):
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = stream.send(reply) if error is None else stream.throw(error)
            except StopIteration:
                return
            reply, error = None, None
            if isinstance(step, Item):
                if not take(step.value):
                    return
                continue
            try:
                reply = yield step
            except Exception as exc:  # a broken connection, thrown in by the driver: the stream's own
                error = exc


# -- the description: every public method of both clients, in the order written ---------------


@dataclass(frozen=True)
class Described:
    """A public method of both clients: its name, its plan, and whether it is an iterator."""

    name: str
    plan: Callable[..., Any]
    iterates: bool


#: Filled by the decorators below as `workbench.client.methods` is imported.
DESCRIBED: dict[str, Described] = {}

_RESULT = re.compile(r"(Plan|Stream)\[(.+)\]")


def method(plan: F) -> F:
    """Describes a method of both clients that returns the result of `plan` (a `Plan`)."""
    return _describe(plan, iterates=False)


def iterator(plan: F) -> F:
    """Describes a method of both clients that iterates the items of `plan` (a `Stream`)."""
    return _describe(plan, iterates=True)


def _describe(plan: F, iterates: bool) -> F:
    kind, _ = result_annotation(plan)
    first = next(iter(inspect.signature(plan).parameters), None)
    if kind != ("Stream" if iterates else "Plan") or first != "client":
        raise TypeError(f"{plan.__name__}: a plan takes `client` first and returns a Plan (or a Stream)")
    DESCRIBED[plan.__name__] = Described(plan.__name__, plan, iterates)
    return plan


def result_annotation(plan: Callable[..., Any]) -> tuple[str, str]:
    """`("Plan", "Execution")` for a plan annotated `-> Plan[Execution]` (annotations stay strings)."""
    match = _RESULT.fullmatch(str(inspect.signature(plan).return_annotation))
    if match is None:
        raise TypeError(f"{plan.__name__}: the return annotation must be Plan[...] or Stream[...]")
    return match[1], match[2]


def dress(wrapper: F, plan: Callable[..., Any], returns: type | None = None) -> F:
    """`wrapper` made to look like the method `plan` describes, for `help()`, IDEs and `inspect`.

    It takes the plan's name, docstring and parameters (`self` in place of `client`), and returns
    the plan's result type, or an iterator of it given as `returns` (`Iterator`, `AsyncIterator`).
    """
    functools.update_wrapper(wrapper, plan, assigned=("__name__", "__doc__"), updated=())
    signature = inspect.signature(plan)
    _client, *parameters = signature.parameters.values()
    result = result_annotation(plan)[1]
    dressed: Any = wrapper
    dressed.__signature__ = signature.replace(
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *parameters],
        return_annotation=f"{returns.__name__}[{result}]" if returns else result,
    )
    hints, result_type = _evaluated(plan)
    iterator: Any = returns
    dressed.__annotations__ = {p.name: hints[p.name] for p in parameters if p.name in hints}
    dressed.__annotations__["return"] = iterator[result_type] if iterator else result_type
    return wrapper


@functools.cache
def _evaluated(plan: Callable[..., Any]) -> tuple[dict[str, Any], Any]:
    """The plan's annotations evaluated, and `X` of its `Plan[X]` or `Stream[X]`.

    Evaluated here, among the plan's names: `typing.get_type_hints()` on a method would look for
    them in its driver's module. Cached, as both drivers ask.
    """
    hints = typing.get_type_hints(plan)
    yields, _sent, result = typing.get_args(hints["return"])
    for step in typing.get_args(yields):
        if typing.get_origin(step) is Item:
            return hints, typing.get_args(step)[0]
    return hints, result


def driver(cls: C) -> C:
    """Checks that `cls` has every described method, each made from its own plan; names them after it."""
    for name, described in DESCRIBED.items():
        if getattr(cls.__dict__.get(name), "__wrapped__", None) is not described.plan:
            raise TypeError(f"{cls.__name__}.{name} is not made from its plan in workbench.client.methods")
    for name in DESCRIBED:
        cls.__dict__[name].__qualname__ = f"{cls.__qualname__}.{name}"
    return cls
