"""The quart-trio application: authentication, body and parameter checks, errors, access log.

Routes are in `routes`. Every request, on every route, gets the same guards before its handler
runs: a body over the limit is `413` (and the connection is closed), any body is read whole before
the answer goes out, and every answer is logged as one `key=value` line without tokens or bodies.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import pydantic
from quart import Response, g, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException

from api.errors import error_response, from_exception
from workbench.daemon import Daemon
from workbench.errors import BadRequest, InvalidRequest, PayloadTooLarge, WorkbenchError
from workbench.models import RequestModel
from workbench.service import Principal

access_log = logging.getLogger("workbench.access")
M = TypeVar("M", bound=RequestModel)

#: Deepest JSON nesting a body may have.
MAX_JSON_DEPTH = 32
#: Largest integer a query parameter or header may carry (SQLite's INTEGER).
MAX_INT = 2**63 - 1
_INTEGER = re.compile(r"-?[0-9]+")
_CONVERTER = re.compile(r"<(?:[^<>]*:)?([A-Za-z_][A-Za-z0-9_]*)>")
_templates: dict[str, str] = {}


def route_template(rule: str) -> str:
    """`/v1/executions/<any(a, b):kind>/<execution_id>` → `/v1/executions/<kind>/<execution_id>`."""
    template = _templates.get(rule)
    if template is None:
        template = _templates[rule] = _CONVERTER.sub(r"<\1>", rule)
    return template


def create_app(daemon: Daemon) -> QuartTrio:
    """The HTTP face of `daemon`."""
    app = QuartTrio("workbench")
    app.config["MAX_CONTENT_LENGTH"] = daemon.settings.max_body_bytes
    app.config["BODY_TIMEOUT"] = 60
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    app.url_map.strict_slashes = False
    # A redirect (308) is no answer this API documents: `//` in a path is simply no route.
    app.url_map.merge_slashes = False
    app.extensions["workbench"] = daemon

    @app.before_request
    async def _guard() -> None:
        g.started = time.perf_counter()
        g.principal = None
        await _read_body(daemon.settings.max_body_bytes)

    @app.after_request
    async def _log(response: Response) -> Response:
        rule = route_template(request.url_rule.rule) if request.url_rule is not None else "-"
        principal = g.principal.name if getattr(g, "principal", None) is not None else "-"
        elapsed = (time.perf_counter() - getattr(g, "started", time.perf_counter())) * 1000
        # The route template, never the raw path: ids stay out, and odd paths cannot forge fields.
        # A stream's duration ends with its headers; its body may go on much longer.
        access_log.info(
            "method=%s route=%s status=%d duration_ms=%.1f principal=%s",
            request.method,
            rule,
            response.status_code,
            elapsed,
            principal,
        )
        return response

    @app.errorhandler(WorkbenchError)
    async def _workbench_error(exc: WorkbenchError) -> Response:
        return from_exception(exc)

    @app.errorhandler(HTTPException)
    async def _http_error(exc: HTTPException) -> Response:
        code = exc.code or 500
        if code in (404, 405):
            allowed = ", ".join(sorted(getattr(exc, "valid_methods", None) or []))
            return error_response(
                "not_found",
                f"no route {request.method} {request.path}" + (f" (it takes {allowed})" if allowed else ""),
            )
        if code == 413:
            return from_exception(_too_large(daemon.settings.max_body_bytes))
        if code >= 500:
            return error_response("internal", exc.description or str(exc))
        # Any other refusal of the HTTP layer (a body that never completes, ...) is a bad request.
        return error_response("bad_request", exc.description or "bad request")

    @app.errorhandler(Exception)
    async def _unexpected(exc: Exception) -> Response:
        rule = route_template(request.url_rule.rule) if request.url_rule is not None else "-"
        logging.getLogger("workbench.api").exception("unhandled error on %s %s", request.method, rule)
        return error_response("internal", "internal error; see the daemon's log")

    from api import routes

    routes.register(app, daemon)
    return app


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the body is larger than {limit} bytes")


async def _read_body(limit: int) -> None:
    """Refuse a body over `limit` at once; otherwise read it whole now.

    A body the handler does not read must still be read before the answer goes out: otherwise
    the rest of it stalls the connection, and the client's next request on it never gets answered.
    """
    length = request.content_length
    if length is not None and length > limit:
        raise _too_large(limit)
    chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    if not length and not chunked:
        return
    try:
        await request.get_data(cache=True)
    except HTTPException as exc:
        if exc.code == 413:
            raise _too_large(limit) from None
        raise


def authenticate(daemon: Daemon, scope: str) -> Principal:
    """The request's principal, which must hold `scope` (401 / 403 otherwise)."""
    from workbench.auth import require

    principal = daemon.authenticator.principal(request.headers.get("Authorization"))
    g.principal = principal
    require(principal, scope)
    return principal


async def parse_body(model: type[M], *, allow_empty: bool = False) -> M:
    """The request body as `model`.

    413 over the limit; 400 for a body that is not UTF-8, not JSON, nested deeper than
    `MAX_JSON_DEPTH`, holding NaN/Infinity, an integer too long to read, or a string that is
    not Unicode (a lone surrogate escape); 422 for a body that is not an object or fails `model`.
    """
    limit = request.max_content_length or 0
    try:
        raw = await request.get_data(cache=True, as_text=False)
    except HTTPException as exc:
        if exc.code == 413:
            raise _too_large(limit) from None
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
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError:  # an integer of thousands of digits
        raise BadRequest("malformed JSON: a number has too many digits") from None
    _check_json(data, 1)
    return data


def _no_constant(name: str) -> Any:
    raise BadRequest(f"malformed JSON: {name} is not a JSON number")


def _check_json(value: Any, level: int) -> None:
    if level > MAX_JSON_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_json(item, level + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, level + 1)


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


def parse_int(name: str, raw: str, *, minimum: int = 0, maximum: int = MAX_INT) -> int:
    """`raw` as an integer in [minimum, maximum]; BadRequest naming `name` otherwise."""
    text = raw.strip()
    if not _INTEGER.fullmatch(text):
        raise BadRequest(f"{name} must be an integer, not {raw[:40]!r}")
    value = int(text) if len(text) <= 20 else MAX_INT + 1
    if not minimum <= value <= maximum:
        raise BadRequest(f"{name} must be between {minimum} and {maximum}")
    return value


def query_int(name: str, default: int, *, minimum: int = 0, maximum: int = MAX_INT) -> int:
    """An integer query parameter; 400 when it is not one (ASCII digits) or out of range."""
    raw = request.args.get(name)
    if raw is None:
        return default
    return parse_int(f"query parameter {name}", raw, minimum=minimum, maximum=maximum)


Handler = Callable[..., Awaitable[Response]]
