"""The one table from Workbench errors to HTTP statuses, and the JSON error responses."""

from __future__ import annotations

import json
from typing import Any

from quart import Response

from workbench.wire.base import WireModel
from workbench.wire.errors import WorkbenchError

#: HTTP status of every error code: one status per code, on every route.
STATUS: dict[str, int] = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "precondition_failed": 412,
    "payload_too_large": 413,
    "range_not_satisfiable": 416,
    "invalid_request": 422,
    "idempotency_key_reused": 422,
    "unknown_image": 422,
    "image_unavailable": 422,
    "unsupported_language": 422,
    "too_many_executions": 429,
    "input_backlog": 429,
    "unavailable": 503,
    "node_unavailable": 503,
    "storage_full": 507,
    "quota_exceeded": 507,
    "internal": 500,
}


def json_text(body: Any) -> str:
    """The JSON text of `body`, whose wire models (`body` itself, the values of a dict, the items
    of a list) pydantic writes with its own encoder: a record with 32 KB of preview took some 65
    µs through `model_dump` and `json.dumps`, 40 µs this way. Everything else is `json.dumps`'s."""
    if isinstance(body, WireModel):
        return body.model_dump_json(by_alias=True)
    if (
        isinstance(body, dict)
        and any(isinstance(v, (WireModel, list)) for v in body.values())
        and all(isinstance(k, str) for k in body)
    ):
        return "{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}" for k, v in body.items()) + "}"
    if isinstance(body, list) and any(isinstance(v, WireModel) for v in body):
        return "[" + ", ".join(json_text(v) for v in body) + "]"
    return json.dumps(body, ensure_ascii=False, default=_wire)


def _wire(value: Any) -> Any:
    # A wire model deeper in `body` than `json_text` looks.
    if isinstance(value, WireModel):
        return value.wire()
    raise TypeError(f"{type(value).__name__} is not JSON")


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response of `body` (`json_text`); `body` may be a ready JSON text."""
    text = body if isinstance(body, str) else json_text(body)
    return Response(text, status=status, content_type="application/json", headers=headers)


def error_response(
    code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> Response:
    """The JSON error of `API.md`, `{"error": {"code", "message"[, "details"]}}`, with its status.

    A code missing from `STATUS` is a bug, answered as 500.
    """
    return json_response(error_body(code, message, details), STATUS.get(code, 500), headers)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The body of `API.md`'s JSON error, `{"error": {"code", "message"[, "details"]}}` (also
    written by the listener, for an answer given before the app: `api/listen.py`)."""
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}


def from_exception(exc: WorkbenchError) -> Response:
    """The JSON error of a Workbench error; 401 names the scheme, 413 closes the connection."""
    headers = None
    if exc.code == "unauthorized":
        headers = {"WWW-Authenticate": "Bearer"}
    elif exc.code == "payload_too_large":
        # The body was not read: the connection cannot carry another request.
        headers = {"Connection": "close"}
    return error_response(exc.code, exc.message, exc.details, headers)
