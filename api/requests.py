"""Reading a request: its principal, its body as a model, its query parameters.

Strict: a body that is not UTF-8 JSON of a bounded depth, a query parameter a route does not
take, or an integer out of range is a clear 400 or 422, and changes nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import pydantic
from quart import g, request
from werkzeug.exceptions import HTTPException

from workbench.core.auth import require
from workbench.core.browser import CSRF_HEADER, Session
from workbench.core.daemon import Daemon
from workbench.core.service import Principal
from workbench.wire.errors import BadRequest, InvalidRequest, PayloadTooLarge
from workbench.wire.models import MAX_WAIT_TIMEOUT_MS, RequestModel

M = TypeVar("M", bound=RequestModel)

#: Deepest JSON nesting a body may have.
MAX_JSON_DEPTH = 32
#: Largest integer a query parameter or header may carry (SQLite's INTEGER).
MAX_INT = 2**63 - 1
_INTEGER = re.compile(r"-?[0-9]+")
_SEQUENCE = re.compile(r"[0-9]+")


def too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the body is larger than {limit} bytes")


async def read_body(limit: int) -> None:
    """Refuse a body over `limit` at once; otherwise read it whole now.

    A body the handler does not read must still be read before the answer goes out: otherwise
    the rest of it stalls the connection, and the client's next request on it never gets answered.
    """
    length = request.content_length
    if length is not None and length > limit:
        raise too_large(limit)
    chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    if not length and not chunked:
        return
    try:
        await request.get_data(cache=True)
    except HTTPException as exc:
        if exc.code == 413:
            raise too_large(limit) from None
        raise


def authenticate(
    daemon: Daemon, scope: str, *, stream_of: str | None = None, changes: bool = False
) -> Principal:
    """The request's principal, which must hold `scope` (401 / 403 otherwise).

    One resolution for every route: a bearer token; else, on the stream of `stream_of`, a
    `?streamToken=` bound to that execution; else the session cookie, with the CSRF header on
    any request that may change something (403 without it): every method but `GET` and `HEAD`,
    and those too on a route that `changes` (the exits feed, which leases what it hands out).
    """
    header = request.headers.get("Authorization")
    cookie = request.cookies.get(daemon.browser.cookie_name)
    token = request.args.get("streamToken") if stream_of is not None else None
    g.session = None
    if header is None and token is not None:
        principal = daemon.browser.stream_principal(token, stream_of or "")
    elif header is None and cookie is not None:
        session = daemon.browser.session(cookie)
        if changes or request.method not in ("GET", "HEAD"):
            daemon.browser.check_csrf(session, request.headers.get(CSRF_HEADER))
        principal = session.principal
        g.session = session
    else:
        principal = daemon.authenticator.principal(header)
    g.principal = principal
    require(principal, scope)
    return principal


def session_alive(daemon: Daemon) -> Callable[[], bool]:
    """For a stream of the request (after `authenticate`): whether it may go on. One opened with a
    session cookie ends with its session (a logout, its expiry); any other goes on."""
    session: Session | None = getattr(g, "session", None)
    if session is None:
        return _always
    return partial(daemon.browser.alive, session)


def _always() -> bool:
    return True


async def parse_body(model: type[M], *, allow_empty: bool = False) -> M:
    """The request body as `model`.

    413 over the limit; 400 for a body that is not UTF-8, not JSON, nested deeper than
    `MAX_JSON_DEPTH`, holding NaN/Infinity, an integer too long to read, a string that is
    not Unicode (a lone surrogate escape), or a name twice in one object; 422 for a body that
    is not an object, holds a number no double can hold (`1e400`), or fails `model`.
    """
    limit = request.max_content_length or 0
    try:
        raw = await request.get_data(cache=True, as_text=False)
    except HTTPException as exc:
        if exc.code == 413:
            raise too_large(limit) from None
        raise
    assert isinstance(raw, bytes)
    if not raw.strip():
        if allow_empty:
            return model.model_validate({})
        raise BadRequest("the request needs a JSON body")
    data = decode_json(raw)
    if not isinstance(data, dict):
        raise InvalidRequest(
            "the body must be a JSON object", details=[{"field": "", "message": "not an object"}]
        )
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        details = [
            {"field": ".".join(str(p) for p in err["loc"]) or "", "message": _clean(err["msg"])}
            for err in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{d['field']}: {d['message']}" if d["field"] else d["message"] for d in details)
        raise InvalidRequest(f"invalid request: {summary}", details=details) from None


def decode_json(raw: bytes) -> Any:
    """Strict JSON of a request body; BadRequest saying what is wrong (see `parse_body`)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_names)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError:  # an integer of thousands of digits
        raise BadRequest("malformed JSON: a number has too many digits") from None
    _check_json(data, 1, ())
    return data


def _unique_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A name given twice in one object: which value would count? Refused rather than guessed.
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise BadRequest(f"malformed JSON: the name {name[:100]!r} is given twice in one object")
            seen.add(name)
    return found


def _no_constant(name: str) -> Any:
    raise BadRequest(f"malformed JSON: {name} is not a JSON number")


def _check_json(value: Any, level: int, path: tuple[str | int, ...]) -> None:
    if level > MAX_JSON_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, float) and not math.isfinite(value):
        # `json` reads 1e400 as infinity, which would be stored and returned as null: refused.
        field = ".".join(str(p) for p in path)
        message = "is a number too large to hold (beyond a double's range)"
        raise InvalidRequest(
            f"invalid request: {field}: {message}", details=[{"field": field, "message": message}]
        )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_json(item, level + 1, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, level + 1, (*path, index))


def _check_text(text: str) -> None:
    # JSON may spell a lone UTF-16 surrogate (\ud800): not a character, and it cannot be stored.
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BadRequest(
                f"malformed JSON: a string holds the lone surrogate \\u{ord(text[exc.start]):04x}"
            ) from None


def _clean(message: str) -> str:
    return message.removeprefix("Value error, ")


def check_query(allowed: Iterable[str] = ()) -> None:
    """400 for a query parameter the route does not take, or one given more than once."""
    args = request.args
    names = set(allowed)
    for name in args:
        if name not in names:
            takes = f"; it takes {', '.join(sorted(names))}" if names else "; it takes none"
            raise BadRequest(f"unknown query parameter {name!r}{takes}")
        if len(args.getlist(name)) > 1:
            raise BadRequest(f"query parameter {name} is given more than once")


def parse_flag(name: str, default: bool) -> bool:
    """The boolean query parameter `name` (`true` or `false`), or `default`; BadRequest otherwise."""
    raw = request.args.get(name)
    if raw is None:
        return default
    if raw not in ("true", "false"):
        raise BadRequest(f"{name} must be true or false, not {raw[:40]!r}")
    return raw == "true"


def parse_int(name: str, raw: str, *, minimum: int = 0, maximum: int = MAX_INT) -> int:
    """`raw` as an integer in [minimum, maximum]: ASCII digits, nothing around them; BadRequest
    naming `name` otherwise."""
    text = raw
    if not _INTEGER.fullmatch(text):
        raise BadRequest(f"{name} must be an integer, not {raw[:40]!r}")
    value = int(text) if len(text) <= 20 else MAX_INT + 1
    if not minimum <= value <= maximum:
        raise BadRequest(f"{name} must be between {minimum} and {maximum}")
    return value


def parse_sequence(name: str, raw: str) -> int:
    """An event sequence number sent in a header: ASCII digits only; BadRequest otherwise."""
    if not _SEQUENCE.fullmatch(raw.strip()):
        raise BadRequest(
            f"{name} must be an event sequence number (a non-negative integer), not {raw[:40]!r}"
        )
    return parse_int(name, raw.strip())


def one_header(name: str) -> str | None:
    """The value of header `name`, or None; BadRequest when it is given more than once (which one
    would count?) or holds anything but printable ASCII (a value read in another encoding
    would be another value)."""
    values = request.headers.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise BadRequest(f"{name} is given {len(values)} times: give it once")
    value = values[0]
    if not value.isascii():
        raise BadRequest(f"{name} must be printable ASCII")
    return value


def idempotency_key() -> str | None:
    """The request's `Idempotency-Key`; BadRequest when it is not 1 to 255 printable ASCII
    characters, or given twice."""
    key = one_header("Idempotency-Key")
    if key is not None and (not key or len(key) > 255 or not key.isprintable()):
        raise BadRequest("Idempotency-Key must be 1 to 255 printable ASCII characters")
    return key


@dataclass(frozen=True)
class IntParam:
    """An integer query parameter of a route: read by the handler, described in the OpenAPI document."""

    name: str
    default: int
    minimum: int = 0
    maximum: int = MAX_INT

    def read(self) -> int:
        """The parameter's value, or its default; 400 when it is not an integer in range."""
        raw = request.args.get(self.name)
        if raw is None:
            return self.default
        return parse_int(f"query parameter {self.name}", raw, minimum=self.minimum, maximum=self.maximum)

    def schema(self) -> dict[str, Any]:
        """Its JSON schema."""
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum, "default": self.default}


#: The integer query parameters of the routes (`GET /v1/executions`, `.../events`, `/v1/exits`).
LIST_LIMIT = IntParam("limit", 50, minimum=1, maximum=1000)
EVENTS_AFTER = IntParam("after", 0)
EVENTS_LIMIT = IntParam("limit", 1000, minimum=1, maximum=10_000)
EXITS_LIMIT = IntParam("limit", 100, minimum=1, maximum=1000)
EXITS_WAIT = IntParam("waitTimeoutMs", 30_000, maximum=MAX_WAIT_TIMEOUT_MS)
EXITS_LEASE = IntParam("leaseMs", 30_000, maximum=3_600_000)
