"""`GET /openapi.json`: the OpenAPI 3.1 document of `API.md`, generated from the wire models.

The schemas come from the same pydantic models the daemon answers with and the client parses
(`workbench.wire.models`), in validation mode for request bodies and serialization mode for
responses; the routes, parameters and error statuses are declared here, route by route, and a
test checks them against the routes the app registers. Every per-execution route is listed with
and without its `{kind}/` segment. The document is plain JSON: no HTML page, nothing from a CDN.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from api.errors import STATUS
from workbench.wire.models import (
    EXECUTION_KINDS,
    ArtifactList,
    CancelRequest,
    CancelResult,
    DetachResult,
    ErrorResponse,
    Event,
    EventPage,
    Execution,
    ExecutionList,
    ExitList,
    Health,
    ImageList,
    StartBashRequest,
    StartCodeRequest,
    WaitRequest,
    WaitResult,
)
from workbench.wire.status import ExecutionStatus

REF = "#/components/schemas/{model}"
Mode = Literal["validation", "serialization"]

#: What each error code means, for the descriptions of the error responses (`API.md`, "Errors").
ERROR_MEANINGS = {
    "bad_request": "malformed JSON or bad query parameters",
    "unauthorized": "missing or wrong bearer token",
    "forbidden": "the token lacks the scope for this route",
    "not_found": "unknown execution, kind, artifact or route, or an execution of another principal",
    "conflict": "the request conflicts with the current state (e.g. deleting a running execution)",
    "payload_too_large": "body over the limit (default 1 MiB)",
    "invalid_request": "fails validation (`details` lists the fields); also `idempotency_key_reused`, "
    "`unknown_image`, `image_unavailable`, `unsupported_language`",
    "too_many_executions": "the queue is full",
    "unavailable": "shutting down, or the store failed",
    "storage_full": "the disk holding the data dir is full: nothing new is written until space is freed",
}
#: Errors every authenticated route may answer.
COMMON = ("bad_request", "unauthorized", "forbidden", "not_found", "unavailable")
WITH_BODY = (*COMMON, "payload_too_large", "invalid_request")
#: What a route that writes may answer as well.
WRITES = ("storage_full",)


@dataclass(frozen=True)
class Op:
    """One operation: method, path (OpenAPI style), what it takes and what it answers."""

    method: str
    path: str
    operation_id: str
    summary: str
    body: type[BaseModel] | None = None
    #: Status → (response model, description); a None model is an empty body.
    ok: dict[int, tuple[type[BaseModel] | None, str]] = field(default_factory=dict)
    errors: tuple[str, ...] = COMMON
    query: tuple[tuple[str, dict[str, Any], str], ...] = ()
    headers: tuple[tuple[str, dict[str, Any], str], ...] = ()
    public: bool = False
    #: A response that is not JSON: (status → (media type, description)).
    raw: dict[int, tuple[str, str]] = field(default_factory=dict)


def _ops() -> list[Op]:
    integer = {"type": "integer", "minimum": 0}
    start_errors = (*WITH_BODY, "conflict", "too_many_executions", *WRITES)
    idempotency = (
        (
            "Idempotency-Key",
            {"type": "string", "minLength": 1, "maxLength": 255},
            "the first request with a key creates the execution; a later one with the same body "
            "returns the same record (200, `Idempotent-Replayed: true`)",
        ),
    )
    started: dict[int, tuple[type[BaseModel] | None, str]] = {
        200: (Execution, "replayed by its Idempotency-Key (header `Idempotent-Replayed: true`)"),
        201: (Execution, "ran in the foreground: the record after up to `waitTimeoutMs` (terminal or not)"),
        202: (Execution, "accepted in the background (`queued` or `running`)"),
    }
    ops = [
        Op(
            "get",
            "/healthz",
            "health",
            "Answers once the daemon accepts work",
            ok={
                200: (Health, "ready"),
                503: (Health, "`degraded`, with the `reason` (e.g. a full disk): new work is refused"),
            },
            errors=(),
            public=True,
        ),
        Op(
            "get",
            "/openapi.json",
            "openapi",
            "This document",
            errors=(),
            public=True,
            raw={200: ("application/json", "the OpenAPI 3.1 document")},
        ),
        Op(
            "post",
            "/v1/executions/workbench_bash",
            "startBash",
            "Start a bash execution",
            StartBashRequest,
            started,
            start_errors,
            headers=idempotency,
        ),
        Op(
            "post",
            "/v1/executions/workbench_code",
            "startCode",
            "Start a code execution",
            StartCodeRequest,
            started,
            start_errors,
            headers=idempotency,
        ),
        Op(
            "get",
            "/v1/executions",
            "listExecutions",
            "List executions, newest first",
            ok={200: (ExecutionList, "a page; pass `nextCursor` as `cursor` for the next")},
            errors=(*COMMON, "invalid_request"),
            query=(
                ("status", {"$ref": REF.format(model="ExecutionStatus")}, "only this status"),
                ("kind", {"type": "string", "enum": list(EXECUTION_KINDS)}, "only this kind"),
                ("sessionId", {"type": "string"}, "only this session's"),
                ("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50}, "page size"),
                ("cursor", {"type": "string"}, "`nextCursor` of the previous page"),
            ),
        ),
        Op(
            "get",
            "/v1/exits",
            "exits",
            "Long-poll the exits feed of detached executions",
            ok={200: (ExitList, "undelivered exits, each leased for `leaseMs`")},
            errors=(*COMMON, *WRITES),
            query=(
                ("limit", {"type": "integer", "minimum": 1, "default": 100}, "at most this many"),
                (
                    "waitTimeoutMs",
                    {**integer, "maximum": 600000, "default": 30000},
                    "long-poll for this long",
                ),
                ("leaseMs", {**integer, "default": 30000}, "hide what is handed out for this long"),
            ),
        ),
        Op(
            "post",
            "/v1/exits/{deliveryId}/ack",
            "ackExit",
            "Mark an exit delivered",
            ok={204: (None, "delivered: never handed out again")},
            errors=(*COMMON, *WRITES),
        ),
        Op(
            "get",
            "/v1/images",
            "images",
            "The images executions can run in",
            ok={200: (ImageList, "every image, available or not")},
        ),
    ]
    per_execution = [
        Op("get", "", "getExecution", "Read one execution", ok={200: (Execution, "the record")}),
        Op(
            "delete",
            "",
            "deleteExecution",
            "Dispose of a terminal execution and its files",
            ok={204: (None, "gone")},
            errors=(*COMMON, "conflict", *WRITES),
        ),
        Op(
            "post",
            "/wait",
            "wait",
            "Wait for the end (long-poll)",
            WaitRequest,
            ok={200: (WaitResult, "terminal, or the wait timed out (`waitTimedOut`)")},
            errors=WITH_BODY,
        ),
        Op(
            "post",
            "/cancel",
            "cancel",
            "Cancel: kill the whole process tree",
            CancelRequest,
            ok={
                202: (CancelResult, "cancel recorded (`cancel_requested` or `cancelled`)"),
                200: (CancelResult, "already terminal: the outcome stands (`cancelled: false`)"),
            },
            errors=(*WITH_BODY, *WRITES),
        ),
        Op(
            "post",
            "/detach",
            "detach",
            "Hand the outcome to the exits feed",
            ok={200: (DetachResult, "`detached: true`, or false with the record if it had already ended")},
            errors=(*COMMON, *WRITES),
        ),
        Op(
            "get",
            "/events",
            "events",
            "A page of journal events",
            ok={200: (EventPage, "events after `after`")},
            query=(
                ("after", {**integer, "default": 0}, "the last sequence already seen"),
                ("limit", {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}, "page size"),
            ),
        ),
        Op(
            "get",
            "/events/stream",
            "eventsStream",
            "Follow the events (server-sent events)",
            query=(("after", {**integer, "default": 0}, "the last sequence already seen"),),
            headers=(
                (
                    "Last-Event-ID",
                    {"type": "string", "pattern": "^[0-9]+$"},
                    "the last `id:` seen; wins over `after`",
                ),
            ),
            raw={200: ("text/event-stream", SSE_DESCRIPTION)},
        ),
        Op("get", "/artifacts", "artifacts", "List the artifacts", ok={200: (ArtifactList, "the artifacts")}),
        Op(
            "get",
            "/artifacts/{name}",
            "artifact",
            "Download an artifact (honours Range)",
            headers=(("Range", {"type": "string"}, "`bytes=a-b`, `bytes=a-` or `bytes=-n`"),),
            raw={
                200: ("application/octet-stream", "the whole artifact"),
                206: ("application/octet-stream", "the range asked for (`Content-Range`)"),
                416: ("application/json", "the range cannot be satisfied (an error body)"),
            },
        ),
    ]
    for op in per_execution:
        for prefix, suffix in (
            ("/v1/executions/{kind}/{executionId}", "WithKind"),
            ("/v1/executions/{executionId}", ""),
        ):
            ops.append(
                Op(
                    op.method,
                    prefix + op.path,
                    op.operation_id + suffix,
                    op.summary,
                    op.body,
                    op.ok,
                    op.errors,
                    op.query,
                    op.headers,
                    op.public,
                    op.raw,
                )
            )
    return ops


SSE_DESCRIPTION = """Each event is `id: SEQUENCE`, `event: EVENT_TYPE`, `data: EVENT_JSON` (an `Event`),
then a blank line. The stream replays every event after `Last-Event-ID` (or `?after=`), follows
live, and ends after the terminal status event. Past the output budget, live followers also get
`output` events without an `id:` (display only: not journaled, not replayed) and, if they fell
behind, one `event: gap` with data `{"missedBytes": N}`. A `: keepalive` comment comes at least
every 15 seconds."""

PATH_PARAMETERS: dict[str, tuple[dict[str, Any], str]] = {
    "kind": ({"type": "string", "enum": list(EXECUTION_KINDS)}, "the execution kind; a wrong one is 404"),
    "executionId": ({"type": "string", "pattern": "^ex_[0-9A-HJKMNP-TV-Z]{26}$"}, "the execution id"),
    "name": ({"type": "string", "enum": ["stdout", "stderr"]}, "the artifact"),
    "deliveryId": ({"type": "string"}, "the delivery id of an exit"),
}


def _schemas(ops: list[Op]) -> dict[str, Any]:
    wanted: dict[tuple[type[BaseModel], Mode], None] = {(ErrorResponse, "serialization"): None}
    for op in ops:
        if op.body is not None:
            wanted[(op.body, "validation")] = None
        for model, _ in op.ok.values():
            if model is not None:
                wanted[(model, "serialization")] = None
    wanted[(Event, "serialization")] = None
    _, top = models_json_schema(list(wanted), by_alias=True, ref_template=REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    if "ExecutionStatus" not in schemas:
        schemas["ExecutionStatus"] = {"type": "string", "enum": [s.value for s in ExecutionStatus]}
    return schemas


def _operation(op: Op) -> dict[str, Any]:
    params: list[dict[str, Any]] = []
    for name in (part[1:-1] for part in op.path.split("/") if part.startswith("{")):
        kind, description = PATH_PARAMETERS[name]
        params.append(
            {"name": name, "in": "path", "required": True, "schema": kind, "description": description}
        )
    params += [{"name": n, "in": "query", "schema": s, "description": d} for n, s, d in op.query]
    params += [{"name": n, "in": "header", "schema": s, "description": d} for n, s, d in op.headers]
    responses: dict[str, Any] = {}
    for status, (model, description) in sorted(op.ok.items()):
        response: dict[str, Any] = {"description": description}
        if model is not None:
            response["content"] = {"application/json": {"schema": {"$ref": REF.format(model=model.__name__)}}}
        responses[str(status)] = response
    for status, (media, description) in sorted(op.raw.items()):
        schema: dict[str, Any] = {"type": "string"}
        if media == "application/octet-stream":
            schema["contentMediaType"] = media
        elif media == "application/json" and status >= 400:
            schema = {"$ref": REF.format(model="ErrorResponse")}
        elif media == "application/json":
            schema = {"type": "object"}
        responses[str(status)] = {"description": description, "content": {media: {"schema": schema}}}
    for code in op.errors:
        responses.setdefault(str(STATUS[code]), {"$ref": f"#/components/responses/{code}"})
    operation: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "responses": responses,
    }
    if params:
        operation["parameters"] = params
    if op.body is not None:
        operation["requestBody"] = {
            "required": op.body not in (WaitRequest, CancelRequest),
            "content": {"application/json": {"schema": {"$ref": REF.format(model=op.body.__name__)}}},
        }
    if op.public:
        operation["security"] = []
    return operation


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once)."""
    ops = _ops()
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    error_ref = {"application/json": {"schema": {"$ref": REF.format(model="ErrorResponse")}}}
    responses = {
        code: {"description": f"`{code}`: {meaning}", "content": error_ref}
        for code, meaning in ERROR_MEANINGS.items()
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Workbench",
            "version": "1",
            "description": "Durable, contained, streamable executions of bash commands and code. "
            'Every error is `{"error": {"code", "message", "details"}}`.',
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": _schemas(ops),
            "responses": responses,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "`Authorization: Bearer <token>`: $WORKBENCH_TOKEN, or the token file "
                    "in the data dir",
                }
            },
        },
    }
