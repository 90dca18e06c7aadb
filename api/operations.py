"""The operations of the OpenAPI document: each route with what it takes, answers and may refuse.

`api.openapi` turns this table into the document; a test checks it against the routes the app
registers. The integer query parameters are the very objects the handlers read them with.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from api.requests import EVENTS_AFTER, EVENTS_LIMIT, EXITS_LEASE, EXITS_LIMIT, EXITS_WAIT, LIST_LIMIT
from workbench.wire.models import (
    EXECUTION_ID,
    SESSION_ID,
    ArtifactList,
    CancelRequest,
    CancelResult,
    Degraded,
    DetachResult,
    EventPage,
    Execution,
    ExecutionList,
    ExitList,
    Health,
    ImageList,
    InputRequest,
    ResizeRequest,
    SignalRequest,
    SignalResult,
    StartBashRequest,
    StartCodeRequest,
    WaitRequest,
    WaitResult,
)
from workbench.wire.starts import BatchRequest, RerunRequest

SCHEMA = "#/components/schemas/{model}"
#: A parameter or header: (name, schema, description).
Param = tuple[str, dict[str, Any], str]

#: Errors every request may get, whatever its route: a query parameter it does not take, a body
#: over the size limit.
ANY = ("bad_request", "payload_too_large")
#: Errors of every route that needs a token.
AUTHENTICATED = (*ANY, "unauthorized", "forbidden", "unavailable")
#: Errors of every per-execution route.
PER_EXECUTION = (*AUTHENTICATED, "not_found")
#: Errors of a route that reads a JSON body.
WITH_BODY = ("invalid_request",)
#: What a route that writes may answer as well (a full disk).
WRITES = ("storage_full",)
START_ERRORS = (
    *AUTHENTICATED,
    *WITH_BODY,
    "idempotency_key_reused",
    "unknown_image",
    "image_unavailable",
    "unsupported_language",
    "too_many_executions",
    *WRITES,
)


def ref(name: str) -> dict[str, Any]:
    """A `$ref` to the named schema."""
    return {"$ref": SCHEMA.format(model=name)}


@dataclass(frozen=True)
class Op:
    """One operation: method, path (OpenAPI style), what it takes and what it answers."""

    method: str
    path: str
    operation_id: str
    summary: str
    body: type[BaseModel] | None = None
    #: Whether the body may be left out (an empty body is `{}`).
    body_optional: bool = False
    #: Status → (response model, description); a None model is an empty body.
    ok: dict[int, tuple[type[BaseModel] | None, str]] = field(default_factory=dict)
    #: The error codes it may answer (each with its status from `api.errors.STATUS`).
    errors: tuple[str, ...] = AUTHENTICATED
    query: tuple[Param, ...] = ()
    headers: tuple[Param, ...] = ()
    #: Response headers: status → ((name, schema, description), ...).
    response_headers: dict[int, tuple[Param, ...]] = field(default_factory=dict)
    public: bool = False
    #: A response that is not JSON: (status → (media type, description)).
    raw: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: A request body that is not JSON: (media type, description).
    raw_body: tuple[str, str] | None = None


SSE_DESCRIPTION = """Each event is `id: SEQUENCE`, `event: EVENT_TYPE`, `data: EVENT_JSON` (an `Event`),
then a blank line. The stream replays every event after `Last-Event-ID` (or `?after=`), follows
live, and ends after the terminal status event. Past the output budget, live followers also get
`output` events without an `id:` (display only: not journaled, not replayed) and, if they fell
behind, one `event: gap` with data `{"missedBytes": N}`. A `: keepalive` comment comes at least
every 15 seconds."""

PATH_PARAMETERS: dict[str, tuple[dict[str, Any], str]] = {
    "kind": (ref("ExecutionKind"), "the execution kind; a wrong one is 404"),
    "executionId": ({"type": "string"}, f"the execution id (`{EXECUTION_ID.pattern}`); any other is 404"),
    "name": (ref("StreamName"), "the artifact; any other name is 404"),
    "nodeId": ({"type": "string"}, "the node's id (`WORKBENCH_NODE_ID`); another node's is 404"),
    "asset": (
        {"type": "string"},
        "a file of the dashboard (`app.js`, `log.js`, `style.css`); any other is 404",
    ),
    "deliveryId": (
        {"type": "string"},
        "the delivery id of an exit (`dl_` + 26 characters); any other is 404",
    ),
    "sessionId": (
        {"type": "string"},
        f"the session (`{SESSION_ID.pattern}`, not `.` or `..`); any other, or another principal's, is 404",
    ),
    "contextId": (
        {"type": "string"},
        "the context id (`cx_` + 26 characters); any other, or another principal's, is 404",
    ),
    "path": (
        {"type": "string"},
        "a path in the session's workspace, relative to it, `/`-separated; one that leads out is 422",
    ),
}


IDEMPOTENCY_KEY: Param = (
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255},
    "printable ASCII characters, given once; the first request with a key creates the execution, "
    "a later one with the same body returns the same record (200, `Idempotent-Replayed: true`)",
)
ETAG: Param = ("ETag", {"type": "string"}, "the record's `rowVersion`, quoted")


def _start(
    path: str,
    operation_id: str,
    summary: str,
    body: type[BaseModel],
    *,
    errors: tuple[str, ...] = START_ERRORS,
) -> Op:
    replayed = (("Idempotent-Replayed", {"type": "string", "enum": ["true"]}, "the answer is a replay"),)
    return Op(
        "post",
        path,
        operation_id,
        summary,
        body,
        body_optional=body is RerunRequest,
        ok={
            200: (Execution, "replayed by its Idempotency-Key (header `Idempotent-Replayed: true`)"),
            201: (
                Execution,
                "ran in the foreground: the record after up to `waitTimeoutMs`, terminal or not",
            ),
            202: (Execution, "accepted in the background (`queued` or `running`)"),
        },
        errors=errors,
        headers=(IDEMPOTENCY_KEY,),
        response_headers={200: replayed},
    )


def _reading_one() -> list[Op]:
    """Reading one execution: the routes under `/v1/executions/{kind}/{executionId}`, relative to it."""
    return [
        Op(
            "get",
            "",
            "getExecution",
            "Read one execution",
            ok={
                200: (Execution, "the record"),
                304: (None, "`If-None-Match` names its current `ETag`: not modified"),
            },
            errors=PER_EXECUTION,
            headers=(
                (
                    "If-None-Match",
                    {"type": "string"},
                    "ETags seen before (or `*`): `304` while the record is still that version",
                ),
            ),
            response_headers={200: (ETAG,), 304: (ETAG,)},
        ),
        Op(
            "post",
            "/wait",
            "wait",
            "Wait for the end (long-poll)",
            WaitRequest,
            body_optional=True,
            ok={200: (WaitResult, "terminal, or the wait timed out (`waitTimedOut`)")},
            errors=(*PER_EXECUTION, *WITH_BODY),
        ),
        Op(
            "get",
            "/events",
            "events",
            "A page of journal events",
            ok={200: (EventPage, "events after `after`")},
            errors=PER_EXECUTION,
            query=(
                (EVENTS_AFTER.name, EVENTS_AFTER.schema(), "the last sequence already seen"),
                (EVENTS_LIMIT.name, EVENTS_LIMIT.schema(), "page size"),
            ),
        ),
        *_streams_and_artifacts(),
    ]


def _streams_and_artifacts() -> list[Op]:
    """The event stream and the artifacts of one execution, with paths relative to it."""
    return [
        Op(
            "get",
            "/events/stream",
            "eventsStream",
            "Follow the events (server-sent events)",
            ok={204: (None, "a reconnect after the terminal event: nothing more will come")},
            errors=PER_EXECUTION,
            query=(
                (EVENTS_AFTER.name, EVENTS_AFTER.schema(), "the last sequence already seen"),
                (
                    "sessionId",
                    {"type": "string", "pattern": f"^{SESSION_ID.pattern}$"},
                    "the session the execution must be of (another is 404)",
                ),
                (
                    "types",
                    {"type": "string"},
                    "event types separated by commas: only those are sent (sequences stay the journal's)",
                ),
                ("streamToken", {"type": "string"}, "instead of a token: a stream token of this execution"),
            ),
            headers=(
                (
                    "Last-Event-ID",
                    {"type": "string", "pattern": "^[0-9]+$"},
                    "the last `id:` seen; wins over `after`",
                ),
            ),
            raw={200: ("text/event-stream", SSE_DESCRIPTION)},
        ),
        Op(
            "get",
            "/artifacts",
            "artifacts",
            "List the artifacts",
            ok={200: (ArtifactList, "the artifacts")},
            errors=PER_EXECUTION,
        ),
        Op(
            "get",
            "/artifacts/{name}",
            "artifact",
            "Download an artifact (honours Range)",
            errors=(*PER_EXECUTION, "range_not_satisfiable", "node_unavailable"),
            headers=(("Range", {"type": "string"}, "one range: `bytes=a-b`, `bytes=a-` or `bytes=-n`"),),
            raw={
                200: ("application/octet-stream", "the whole artifact"),
                206: ("application/octet-stream", "the range asked for (`Content-Range`)"),
            },
        ),
    ]


def _acting_on_one() -> list[Op]:
    """Acting on one execution (rerun, delete, cancel, signal, detach), with paths relative to it."""
    return [
        _start(
            "/rerun",
            "rerun",
            "Start a new execution with the same spec (stdin included)",
            RerunRequest,
            errors=(*PER_EXECUTION, *START_ERRORS),
        ),
        Op(
            "delete",
            "",
            "deleteExecution",
            "Dispose of a terminal execution and its files",
            ok={204: (None, "gone")},
            errors=(*PER_EXECUTION, "conflict", *WRITES),
        ),
        Op(
            "post",
            "/cancel",
            "cancel",
            "Cancel: kill the whole process tree",
            CancelRequest,
            body_optional=True,
            ok={
                202: (CancelResult, "cancel recorded (`cancel_requested` or `cancelled`)"),
                200: (CancelResult, "already terminal: the outcome stands (`cancelled: false`)"),
            },
            errors=(*PER_EXECUTION, *WITH_BODY, *WRITES),
        ),
        Op(
            "post",
            "/input",
            "sendInput",
            "Write to the open stdin (or terminal) of a running execution",
            InputRequest,
            ok={204: (None, "written (or waiting for the process to read it), and journaled as `input`")},
            errors=(*PER_EXECUTION, *WITH_BODY, "conflict", "input_backlog", *WRITES),
            query=(
                ("eof", {"type": "boolean"}, "raw bytes only: then close stdin (JSON bodies say `eof`)"),
                ("record", {"type": "boolean"}, "raw bytes only: `false` keeps the bytes out of the journal"),
            ),
            raw_body=("application/octet-stream", "JSON `InputRequest`, or the raw bytes to write"),
        ),
        Op(
            "post",
            "/resize",
            "resize",
            "Set the size of a running execution's terminal",
            ResizeRequest,
            ok={204: (None, "resized (its foreground process group gets SIGWINCH), journaled as `resize`")},
            errors=(*PER_EXECUTION, *WITH_BODY, "conflict", *WRITES),
        ),
        Op(
            "post",
            "/signal",
            "signal",
            "Send a signal to a running tree (to its terminal's foreground process group on a tty)",
            SignalRequest,
            ok={202: (SignalResult, "sent, and journaled as a `signal` event")},
            errors=(*PER_EXECUTION, *WITH_BODY, "conflict"),
        ),
        Op(
            "post",
            "/detach",
            "detach",
            "Hand the outcome to the exits feed",
            ok={200: (DetachResult, "`detached: true`, or false with the record if it had already ended")},
            errors=(*PER_EXECUTION, *WRITES),
        ),
    ]


def _per_execution() -> list[Op]:
    """The routes under `/v1/executions/{kind}/{executionId}`, with paths relative to it."""
    return [*_reading_one(), *_acting_on_one()]


def with_and_without_kind(op: Op) -> list[Op]:
    """A per-execution operation (path relative to the execution's) at both of its paths."""
    return [
        replace(
            op,
            path="/v1/executions/{kind}/{executionId}" + op.path,
            operation_id=op.operation_id + "WithKind",
        ),
        replace(op, path="/v1/executions/{executionId}" + op.path),
    ]


def _daemon_ops() -> list[Op]:
    """The daemon's own routes: health, the OpenAPI document, the exits feed, images."""
    return [
        Op(
            "get",
            "/healthz",
            "health",
            "Answers once the daemon accepts work",
            ok={
                200: (Health, "ready"),
                503: (Degraded, "degraded: `reason` says why (a full disk, the supervisor replaced)"),
            },
            errors=ANY,
            public=True,
        ),
        Op(
            "get",
            "/openapi.json",
            "openapi",
            "This document",
            errors=ANY,
            public=True,
            raw={200: ("application/json", "the OpenAPI 3.1 document")},
        ),
        Op(
            "get",
            "/v1/exits",
            "exits",
            "Long-poll the exits feed of detached executions",
            ok={200: (ExitList, "undelivered exits, each leased for `leaseMs`")},
            errors=(*AUTHENTICATED, *WRITES),
            query=(
                (EXITS_LIMIT.name, EXITS_LIMIT.schema(), "at most this many"),
                (EXITS_WAIT.name, EXITS_WAIT.schema(), "long-poll for this long"),
                (
                    EXITS_LEASE.name,
                    EXITS_LEASE.schema(),
                    "hide what is handed out for this long (0: a look, hiding nothing)",
                ),
            ),
        ),
        Op(
            "post",
            "/v1/exits/{deliveryId}/ack",
            "ackExit",
            "Mark an exit delivered",
            ok={204: (None, "delivered: never handed out again")},
            errors=(*AUTHENTICATED, "not_found", *WRITES),
        ),
        Op(
            "get",
            "/v1/images",
            "images",
            "The images executions can run in",
            ok={200: (ImageList, "every image, available or not")},
        ),
    ]


def _starting_and_listing() -> list[Op]:
    """The starts (of a kind, of a batch) and the listing."""
    return [
        _start("/v1/executions/workbench_bash", "startBash", "Start a bash execution", StartBashRequest),
        _start(
            "/v1/executions/workbench_code",
            "startCode",
            "Start a code execution",
            StartCodeRequest,
            # `contextId`: a context that is not the caller's is 404, a dead one 409.
            errors=(*START_ERRORS, "not_found", "conflict"),
        ),
        _start(
            "/v1/executions/batch", "startBatch", "Start a batch of executions, all or none", BatchRequest
        ),
        Op(
            "get",
            "/v1/executions",
            "listExecutions",
            "List executions, newest first",
            ok={200: (ExecutionList, "a page; pass `nextCursor` as `cursor` for the next")},
            query=(
                ("status", ref("ExecutionStatus"), "only this status"),
                ("kind", ref("ExecutionKind"), "only this kind"),
                (
                    "sessionId",
                    {"type": "string", "pattern": f"^{SESSION_ID.pattern}$"},
                    "only this session's",
                ),
                (LIST_LIMIT.name, LIST_LIMIT.schema(), "page size"),
                (
                    "cursor",
                    {"type": "string", "pattern": f"^{EXECUTION_ID.pattern}$"},
                    "`nextCursor` of the previous page",
                ),
                (
                    "rerunOf",
                    {"type": "string", "pattern": f"^{EXECUTION_ID.pattern}$"},
                    "only the reruns of this execution",
                ),
                (
                    "batchId",
                    {"type": "string", "pattern": f"^{EXECUTION_ID.pattern}$"},
                    "only the items of this batch",
                ),
                (
                    "q",
                    {"type": "string", "minLength": 1, "maxLength": 200},
                    "text in the id, command, code or metadata",
                ),
                (
                    "include",
                    {"type": "string", "const": "preview"},
                    "`preview`: each record carries its `preview` (otherwise null)",
                ),
                ("service", {"type": "boolean"}, "`true`: only services; `false`: only the others"),
            ),
        ),
    ]


def operations() -> list[Op]:
    """Every operation of the API, per-execution ones with and without their `{kind}/` segment."""
    ops = [*_daemon_ops(), *_starting_and_listing()]
    for op in _per_execution():
        ops.extend(with_and_without_kind(op))
    return ops
