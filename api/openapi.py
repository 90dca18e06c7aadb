"""`GET /openapi.json`: the OpenAPI 3.1 document of the API, generated from the wire models.

The schemas come from the same pydantic models the daemon answers with and the client parses
(`workbench.wire.models`), in validation mode for request bodies and serialization mode for
responses (where every field is always present, so every field is `required`). Each enum is one
named schema, referenced wherever it is used. The routes, parameters and error statuses are in
`api.operations`; a test checks them against the routes the app registers. The document is plain
JSON: no HTML page, nothing from a CDN.
"""

from __future__ import annotations

import functools
import typing
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from api.browser_ops import all_operations
from api.errors import STATUS
from api.operations import PATH_PARAMETERS, SCHEMA, Op, ref
from workbench.wire.browser import Change, ChangeType
from workbench.wire.contexts import CONTEXT_STATUSES
from workbench.wire.files import FileEvent, FileEventType, FileType
from workbench.wire.models import (
    ErrorResponse,
    Event,
    EventType,
    ExecutionKind,
    OnWaitTimeout,
    PreviewFormat,
    ProcessKind,
    StreamName,
)
from workbench.wire.status import ExecutionStatus

Mode = Literal["validation", "serialization"]

#: What each error code means (the descriptions of the error responses).
ERROR_MEANINGS = {
    "bad_request": "malformed JSON, a query parameter the route does not take or that does not parse, "
    "a bad header",
    "unauthorized": "missing or wrong bearer token",
    "forbidden": "the token lacks the scope for this route",
    "not_found": "unknown execution, kind, artifact, exit, session, file or route (or a wrong method), "
    "or an execution or session of another principal",
    "conflict": "the request conflicts with the current state: deleting an execution that has not ended, "
    "a directory where a file goes",
    "payload_too_large": "body over the limit (1 MiB; a file: `WORKBENCH_MAX_FILE_BYTES`)",
    "precondition_failed": "`If-Match` or `If-None-Match` does not hold for the file as it is now",
    "quota_exceeded": "the write would take the session's workspace past its quota",
    "range_not_satisfiable": "the `Range` cannot be met (`Content-Range: bytes */SIZE`)",
    "invalid_request": "the body fails validation (`details` lists the fields)",
    "idempotency_key_reused": "the Idempotency-Key was first used with a different body",
    "unknown_image": "no image by that name",
    "image_unavailable": "the image cannot run on this machine",
    "unsupported_language": "the image has no such language",
    "input_backlog": "the process has not read the input sent before; nothing of this one was taken",
    "too_many_executions": "the queue is full, or the principal's `maxQueued` quota is reached; a "
    "new code context: `maxContexts` or `WORKBENCH_MAX_CONTEXTS` (`details.quota` names which)",
    "unavailable": "shutting down, or the store failed",
    "internal": "a bug: see the daemon's log",
    "node_unavailable": "the node that holds the artifact (its `nodeId`) cannot be reached now: down, "
    "no `WORKBENCH_NODE_URL`, or no `WORKBENCH_NODE_TOKEN` to prove this node to it",
    "storage_full": "the disk holding the data dir is full: nothing new is written until space is freed",
}

#: The enums of the wire, each one named schema.
ENUMS: dict[str, tuple[list[str], str]] = {
    "ExecutionKind": (list(typing.get_args(ExecutionKind)), "what an execution runs"),
    "ProcessKind": (list(typing.get_args(ProcessKind)), "what a batch's item runs (a batch holds no batch)"),
    "ExecutionStatus": ([s.value for s in ExecutionStatus], "where an execution is in its life"),
    "EventType": (list(typing.get_args(EventType)), "what a journal event records"),
    "StreamName": (list(typing.get_args(StreamName)), "an output stream (and the artifact that keeps it)"),
    "Containment": (["cgroup", "pidns", "pgroup"], "how an execution's process tree is held and killed"),
    "PreviewFormat": (list(typing.get_args(PreviewFormat)), "how the record's `preview` is made"),
    "OnWaitTimeout": (
        list(typing.get_args(OnWaitTimeout)),
        "what a foreground start does when its wait passes",
    ),
    "ChangeType": (list(typing.get_args(ChangeType)), "what changed, in the changes stream"),
    "ErrorCode": (list(STATUS), "the code of an error response; its HTTP status is fixed per code"),
    "WaitUntil": (["end", "ready"], "what a wait waits for: the end, or a service's readiness"),
    "FileType": (list(typing.get_args(FileType)), "what a path of a workspace is"),
    "FileEventType": (list(typing.get_args(FileEventType)), "what changed under a watched path"),
    "ContextStatus": (list(CONTEXT_STATUSES), "what a code context is doing"),
}
#: Fields typed as plain strings in Python whose values are one of an enum.
FIELD_ENUMS = {
    ("ErrorBody", "code"): "ErrorCode",
    ("Execution", "containment"): "Containment",
    ("Context", "status"): "ContextStatus",
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
    wanted[(FileEvent, "serialization")] = None
    wanted[(Change, "serialization")] = None  # the data of `GET /v1/events/stream`
    _, top = models_json_schema(list(wanted), by_alias=True, ref_template=SCHEMA)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    for name, (values, description) in ENUMS.items():
        schemas[name] = {"type": "string", "enum": values, "description": description}
    for (owner, prop), enum_name in FIELD_ENUMS.items():
        old = schemas[owner]["properties"][prop]
        nullable = any(branch.get("type") == "null" for branch in old.get("anyOf", ()))
        new: dict[str, Any] = {"anyOf": [ref(enum_name), {"type": "null"}]} if nullable else ref(enum_name)
        schemas[owner]["properties"][prop] = {**new, **_keep(old)}
    by_values = {frozenset(values): name for name, (values, _) in ENUMS.items()}
    bodies = {op.body.__name__ for op in ops if op.body is not None}
    for name, schema in schemas.items():
        if name in ENUMS:
            continue
        schemas[name] = schema = _named_enums(schema, by_values)
        if name not in bodies:
            # A default says what the server assumes when a request leaves a field out: a response
            # leaves nothing out.
            for prop in schema.get("properties", {}).values():
                prop.pop("default", None)
    return schemas


def _keep(schema: dict[str, Any]) -> dict[str, Any]:
    """What a property's schema says besides its type (its description, default)."""
    return {k: v for k, v in schema.items() if k in ("description", "default")}


def _named_enums(schema: Any, by_values: dict[frozenset[str], str]) -> Any:
    """`schema` with each inlined enum of a named one replaced by a `$ref`, and without the
    generated `title` of each property (the camelCase name, badly spelled)."""
    if isinstance(schema, list):
        return [_named_enums(item, by_values) for item in schema]
    if not isinstance(schema, dict):
        return schema
    enum = schema.get("enum")
    if isinstance(enum, list) and frozenset(enum) in by_values:
        rest = {k: v for k, v in schema.items() if k not in ("enum", "type", "title")}
        return {**ref(by_values[frozenset(enum)]), **rest}
    out = {k: _named_enums(v, by_values) for k, v in schema.items()}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            k: {kk: vv for kk, vv in v.items() if kk != "title"} for k, v in out["properties"].items()
        }
    return out


def _error_responses(codes: tuple[str, ...]) -> dict[str, Any]:
    """The error responses of an operation, one per status: a `$ref` where one code has that status."""
    by_status: dict[int, list[str]] = {}
    for code in codes:
        by_status.setdefault(STATUS[code], []).append(code)
    responses: dict[str, Any] = {}
    for status, group in sorted(by_status.items()):
        if len(group) == 1:
            responses[str(status)] = {"$ref": f"#/components/responses/{group[0]}"}
        else:
            responses[str(status)] = {
                "description": "; ".join(f"`{code}`: {ERROR_MEANINGS[code]}" for code in group),
                "content": {"application/json": {"schema": ref("ErrorResponse")}},
            }
    return responses


#: Before OpenAPI 3.2, the schema of `text/event-stream` describes one event of the stream.
SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "description": "one server-sent event; `data` is JSON (see the operation's description)",
    "properties": {
        "event": {"type": "string"},
        "id": {"type": "string"},
        "data": {"type": "string"},
        "retry": {"type": "integer"},
    },
}


def _operation(op: Op) -> dict[str, Any]:
    params: list[dict[str, Any]] = []
    for name in (part[1:-1] for part in op.path.split("/") if part.startswith("{")):
        schema, description = PATH_PARAMETERS[name]
        params.append(
            {"name": name, "in": "path", "required": True, "schema": schema, "description": description}
        )
    params += [{"name": n, "in": "query", "schema": s, "description": d} for n, s, d in op.query]
    params += [{"name": n, "in": "header", "schema": s, "description": d} for n, s, d in op.headers]
    responses: dict[str, Any] = {}
    for status, (model, description) in sorted(op.ok.items()):
        response: dict[str, Any] = {"description": description}
        if model is not None:
            response["content"] = {"application/json": {"schema": ref(model.__name__)}}
        if status in op.response_headers:
            response["headers"] = {
                n: {"schema": s, "description": d} for n, s, d in op.response_headers[status]
            }
        responses[str(status)] = response
    for status, (media, description) in sorted(op.raw.items()):
        body: dict[str, Any] = {"type": "string"}
        if media == "application/octet-stream":
            body["contentMediaType"] = media
        elif media == "application/json":
            body = {"type": "object"}
        elif media == "text/event-stream":
            body = SSE_EVENT
        if str(status) in responses:  # the same status answers JSON or these bytes
            responses[str(status)].setdefault("content", {})[media] = {"schema": body}
        else:
            responses[str(status)] = {"description": description, "content": {media: {"schema": body}}}
    responses.update(_error_responses(op.errors))
    operation: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "responses": responses,
    }
    if params:
        operation["parameters"] = params
    if op.body is not None:
        operation["requestBody"] = {
            "required": not op.body_optional,
            "content": {"application/json": {"schema": ref(op.body.__name__)}},
        }
    if op.raw_body is not None:
        media, description = op.raw_body
        body = operation.setdefault("requestBody", {"required": True, "content": {}})
        body["description"] = description
        body["content"][media] = {"schema": {"type": "string", "contentMediaType": media}}
    if op.public:
        operation["security"] = []
    return operation


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once)."""
    ops = all_operations()
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    error_content = {"application/json": {"schema": ref("ErrorResponse")}}
    responses = {
        code: {
            "description": f"`{code}` ({STATUS[code]}): {ERROR_MEANINGS[code]}",
            "content": error_content,
            "x-http-status": STATUS[code],
        }
        for code in STATUS
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Workbench",
            "version": "1",
            "description": "Durable, contained, streamable executions of bash commands and code. "
            'Every error is `{"error": {"code", "message", "details"}}`, with the HTTP status of its code.',
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
