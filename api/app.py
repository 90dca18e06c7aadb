"""The quart-trio application: authentication, body parsing, errors, access log; routes in `routes`."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
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


def create_app(daemon: Daemon) -> QuartTrio:
    """The HTTP face of `daemon`."""
    app = QuartTrio("workbench")
    app.config["MAX_CONTENT_LENGTH"] = daemon.settings.max_body_bytes
    app.config["BODY_TIMEOUT"] = 60
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    app.url_map.strict_slashes = False
    app.extensions["workbench"] = daemon

    @app.before_request
    async def _start_clock() -> None:
        g.started = time.perf_counter()
        g.principal = None

    @app.after_request
    async def _log(response: Response) -> Response:
        rule = request.url_rule.rule if request.url_rule is not None else "<no route>"
        principal = g.principal.name if getattr(g, "principal", None) is not None else "-"
        elapsed = (time.perf_counter() - getattr(g, "started", time.perf_counter())) * 1000
        access_log.info(
            "%s %s %d %.1fms principal=%s", request.method, rule, response.status_code, elapsed, principal
        )
        return response

    @app.errorhandler(WorkbenchError)
    async def _workbench_error(exc: WorkbenchError) -> Response:
        return from_exception(exc)

    @app.errorhandler(HTTPException)
    async def _http_error(exc: HTTPException) -> Response:
        code = exc.code or 500
        if code == 404:
            return error_response("not_found", f"no route {request.method} {request.path}")
        if code == 405:
            allowed = ", ".join(sorted(getattr(exc, "valid_methods", None) or []))
            return error_response(
                "not_found",
                f"no route {request.method} {request.path}" + (f" (it takes {allowed})" if allowed else ""),
            )
        if code == 413:
            return error_response(
                "payload_too_large",
                f"the body is larger than {daemon.settings.max_body_bytes} bytes",
                headers={"Connection": "close"},
            )
        if code == 400:
            return error_response("bad_request", exc.description or "bad request")
        return error_response("internal" if code >= 500 else "bad_request", exc.description or str(exc))

    @app.errorhandler(Exception)
    async def _unexpected(exc: Exception) -> Response:
        logging.getLogger("workbench.api").exception("unhandled error on %s %s", request.method, request.path)
        return error_response("internal", "internal error; see the daemon's log")

    from api import routes

    routes.register(app, daemon)
    return app


def authenticate(daemon: Daemon, scope: str) -> Principal:
    """The request's principal, which must hold `scope` (401 / 403 otherwise)."""
    from workbench.auth import require

    principal = daemon.authenticator.principal(request.headers.get("Authorization"))
    g.principal = principal
    require(principal, scope)
    return principal


async def parse_body(model: type[M], *, allow_empty: bool = False) -> M:
    """The request body as `model`: 413 over the limit, 400 for bad UTF-8 or JSON, 422 for fields."""
    length = request.content_length
    limit = request.max_content_length
    if length is not None and limit is not None and length > limit:
        raise PayloadTooLarge(f"the body is larger than {limit} bytes")
    try:
        raw = await request.get_data(cache=False, as_text=False)
    except HTTPException as exc:
        if exc.code == 413:
            raise PayloadTooLarge(f"the body is larger than {limit} bytes") from None
        raise
    assert isinstance(raw, bytes)
    if not raw.strip():
        if allow_empty:
            return model.model_validate({})
        raise BadRequest("the request needs a JSON body")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
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


def _clean(message: str) -> str:
    return message.removeprefix("Value error, ")


def _depth(value: Any, level: int = 1) -> int:
    if level > MAX_JSON_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level)
    return level


def query_int(name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    """An integer query parameter; 400 when it is not one or out of range."""
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"query parameter {name} must be an integer, not {raw!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise BadRequest(f"query parameter {name} must be {bound}")
    return value


Handler = Callable[..., Awaitable[Response]]
