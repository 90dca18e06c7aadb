"""The routes of `API.md`. Each handler parses, makes one service call, and serialises."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import trio
from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import MethodNotAllowed

from api import sse
from api.download import file_response, image_json, remote_response
from api.errors import json_response
from api.requests import (
    EVENTS_AFTER,
    EVENTS_LIMIT,
    EXITS_LEASE,
    EXITS_LIMIT,
    EXITS_WAIT,
    LIST_LIMIT,
    authenticate,
    check_query,
    idempotency_key,
    one_header,
    parse_body,
    parse_flag,
    parse_sequence,
    session_alive,
)
from workbench.core.auth import EXECUTE, READ
from workbench.core.daemon import Daemon
from workbench.core.principals import Principal
from workbench.core.ready import wait_ready
from workbench.core.records import format_time
from workbench.core.service import Started
from workbench.wire.errors import BadRequest, NotFound, PayloadTooLarge
from workbench.wire.fields import DELIVERY_ID, check_session
from workbench.wire.interactive import MAX_INPUT_BYTES
from workbench.wire.models import (
    EVENT_TYPES,
    EXECUTION_ID,
    EXECUTION_KINDS,
    CancelRequest,
    InputRequest,
    ResizeRequest,
    SignalRequest,
    StartBashRequest,
    StartCodeRequest,
    StartRequest,
    WaitRequest,
)
from workbench.wire.starts import BatchRequest, RerunRequest
from workbench.wire.status import ExecutionStatus

#: The kinds a start route takes, and those of per-execution routes (a batch's too).
START_KINDS = "<any(workbench_bash, workbench_code):kind>"
KINDS = "<any(workbench_bash, workbench_code, batch):kind>"
STATUSES = frozenset(s.value for s in ExecutionStatus)
_CHUNK = 256 * 1024


def register(app: QuartTrio, daemon: Daemon) -> None:
    """Add every route to `app`."""
    for add in (_daemon, _starts, _listing, _reads, _actions, _interactive):
        add(app, daemon)


def per_execution(
    app: QuartTrio, suffix: str, methods: list[str], name: str
) -> Callable[[Callable[..., Awaitable[Response]]], None]:
    """Register a handler at `/v1/executions/{kind}/{id}<suffix>` and `/v1/executions/{id}<suffix>`."""

    def decorate(handler: Callable[..., Awaitable[Response]]) -> None:
        async def with_kind(kind: str, execution_id: str, **kw: Any) -> Response:
            return await handler(kind, execution_id, **kw)

        async def without_kind(execution_id: str, **kw: Any) -> Response:
            if not suffix and execution_id in EXECUTION_KINDS:
                # `/v1/executions/workbench_bash` is a start's path (POST), not an execution's.
                raise MethodNotAllowed(valid_methods=["POST"])
            return await handler(None, execution_id, **kw)

        app.add_url_rule(
            f"/v1/executions/{KINDS}/<execution_id>{suffix}", f"{name}_kind", with_kind, methods=methods
        )
        app.add_url_rule(f"/v1/executions/<execution_id>{suffix}", name, without_kind, methods=methods)

    return decorate


def _starts(app: QuartTrio, daemon: Daemon) -> None:
    """Starts: a kind's, a batch's, a rerun's."""
    svc = daemon.service
    on = partial(per_execution, app)

    @app.post(f"/v1/executions/{START_KINDS}")
    async def start(kind: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        model: type[StartRequest] = StartBashRequest if kind == "workbench_bash" else StartCodeRequest
        body = await parse_body(model)
        started = await svc.run(principal, body, idempotency_key())
        execution = started.execution
        headers = {"Idempotent-Replayed": "true"} if started.replayed else None
        status = 200 if started.replayed else (202 if body.background else 201)
        return json_response(execution, status, headers)

    async def answer_started(principal: Principal, started: Started, background: bool) -> Response:
        """A start's answer: at once (background), or once terminal or `waitTimeoutMs` passed."""
        execution = started.execution
        if started.wait_ms is not None and not execution.terminal:
            final = None
            # A new batch was read back after its items were submitted: it may have moved since.
            fresh = not started.replayed and execution.execution_kind != "batch"
            with trio.move_on_after(started.wait_ms / 1000):
                final = await svc.wait_terminal(execution.execution_id, fresh=fresh)
            execution = final or await svc.get(principal, execution.execution_id)
        headers = {"Idempotent-Replayed": "true"} if started.replayed else None
        status = 200 if started.replayed else (202 if background else 201)
        return json_response(execution, status, headers)

    @app.post("/v1/executions/batch")
    async def start_batch() -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        body = await parse_body(BatchRequest)
        started = await svc.start_batch(principal, body, idempotency_key())
        return await answer_started(principal, started, body.background)

    @on("/rerun", ["POST"], "rerun")
    async def rerun(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        body = await parse_body(RerunRequest, allow_empty=True)
        started = await svc.rerun(principal, execution_id, kind, body, idempotency_key())
        return await answer_started(principal, started, body.background)


def _listing(app: QuartTrio, daemon: Daemon) -> None:
    """`GET /v1/executions`."""
    svc = daemon.service

    @app.get("/v1/executions")
    async def list_executions() -> Response:
        principal = authenticate(daemon, READ)
        page, next_cursor = await svc.list(principal, **_list_filters(), limit=LIST_LIMIT.read())
        return json_response({"executions": list(page), "nextCursor": next_cursor})


def _list_filters() -> dict[str, Any]:
    """The listing's query (but its limit), checked: like every other query parameter, a bad
    value is 400 (not 422: no body is involved)."""
    args = request.args
    check_query(
        ("status", "kind", "sessionId", "limit", "cursor", "rerunOf", "batchId", "include", "service", "q")
    )
    status, kind = args.get("status"), args.get("kind")
    service = args.get("service")
    if service is not None and service not in ("true", "false"):
        raise BadRequest("query parameter service must be true or false")
    session_id, cursor = args.get("sessionId"), args.get("cursor")
    if status is not None and status not in STATUSES:
        raise BadRequest(f"query parameter status must be one of {', '.join(ExecutionStatus)}")
    if kind is not None and kind not in EXECUTION_KINDS:
        raise BadRequest(f"query parameter kind must be one of {', '.join(EXECUTION_KINDS)}")
    _check_session_query(session_id)
    if cursor is not None and not EXECUTION_ID.fullmatch(cursor):
        raise BadRequest("query parameter cursor is not a cursor this daemon handed out")
    include = args.get("include")
    if include is not None and include != "preview":
        raise BadRequest("query parameter include must be preview")
    text = args.get("q")
    if text is not None and not 1 <= len(text) <= 200:
        raise BadRequest("query parameter q must be 1 to 200 characters")
    rerun_of, batch_id = args.get("rerunOf"), args.get("batchId")
    for name, value in (("rerunOf", rerun_of), ("batchId", batch_id)):
        if value is not None and not EXECUTION_ID.fullmatch(value):
            raise BadRequest(f"query parameter {name} must be an execution id")
    return {
        "status": status,
        "kind": kind,
        "session_id": session_id,
        "cursor": cursor,
        "preview": include == "preview",
        "rerun_of": rerun_of,
        "batch_id": batch_id,
        "service": None if service is None else service == "true",
        "text": text,
    }


def _reads(app: QuartTrio, daemon: Daemon) -> None:
    """Reading executions: the listing, a record, waits, events, streams and artifacts."""
    svc = daemon.service
    settings = daemon.settings
    on = partial(per_execution, app)

    @on("", ["GET"], "get_execution")
    async def get_execution(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        execution = await svc.get(principal, execution_id, kind)
        etag = f'"{execution.row_version}"'
        if etag_matches(request.headers.get("If-None-Match"), etag):
            return Response("", status=304, headers={"ETag": etag})
        return json_response(execution, headers={"ETag": etag})

    @on("/wait", ["POST"], "wait")
    async def wait(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        body = await parse_body(WaitRequest, allow_empty=True)  # bounds checked there: 422
        wait_ms = (
            body.wait_timeout_ms if body.wait_timeout_ms is not None else settings.default_wait_timeout_ms
        )
        if body.until == "ready":
            execution, timed_out = await wait_ready(svc, principal, execution_id, kind, wait_ms)
        else:
            execution, timed_out = await svc.wait(principal, execution_id, kind, wait_ms)
        return json_response({"execution": execution, "waitTimedOut": timed_out})

    @on("/events", ["GET"], "events")
    async def events(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query(("after", "limit"))
        page = await svc.events(
            principal,
            execution_id,
            kind,
            EVENTS_AFTER.read(),
            EVENTS_LIMIT.read(),
        )
        text = (
            '{"events": [' + ", ".join(page.bodies) + f'], "nextAfter": {page.next_after}, '
            f'"terminal": {"true" if page.terminal else "false"}}}'
        )
        return json_response(text)

    @on("/events/stream", ["GET"], "events_stream")
    async def events_stream(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ, stream_of=execution_id)
        check_query(("after", "sessionId", "types", "streamToken"))
        # Both are checked, and a number the store cannot hold is a 400, not a broken stream.
        after = EVENTS_AFTER.read()
        last_event_id = one_header("Last-Event-ID")
        if last_event_id is not None:
            after = parse_sequence("Last-Event-ID", last_event_id)  # wins over ?after=
        session_id = request.args.get("sessionId")
        _check_session_query(session_id)
        options = sse.Options(
            session_id=session_id, types=parse_types(request.args.get("types")), alive=session_alive(daemon)
        )
        return await sse.stream(daemon, principal, execution_id, kind, after, options)

    @on("/artifacts", ["GET"], "artifacts")
    async def artifacts(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        execution = await svc.get(principal, execution_id, kind)
        return json_response({"artifacts": list(execution.artifacts)})

    @on("/artifacts/<name>", ["GET"], "artifact")
    async def artifact(kind: str | None, execution_id: str, name: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        path, size, content_type, node = await svc.artifact_file(principal, execution_id, kind, name)
        if node is not None and svc.cluster is not None:
            return await remote_response(svc.cluster.calls, node, execution_id, name)
        return await file_response(path, size, content_type, name)


def _actions(app: QuartTrio, daemon: Daemon) -> None:
    """Acting on one execution: delete, cancel, signal, detach; a stream token for it."""
    svc = daemon.service
    on = partial(per_execution, app)

    @on("", ["DELETE"], "delete_execution")
    async def delete_execution(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await svc.delete(principal, execution_id, kind)
        return Response("", status=204)

    @on("/cancel", ["POST"], "cancel")
    async def cancel(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        body = await parse_body(CancelRequest, allow_empty=True)
        cancelled, execution = await svc.cancel(principal, execution_id, kind, body.reason, body.grace_ms)
        return json_response({"cancelled": cancelled, "execution": execution}, 202 if cancelled else 200)

    @on("/signal", ["POST"], "signal")
    async def send_signal(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await svc.get(principal, execution_id, kind)  # an id that names nothing is 404 before the body
        body = await parse_body(SignalRequest)
        execution = await svc.signal(principal, execution_id, kind, body.signal)
        return json_response({"execution": execution}, 202)

    @on("/detach", ["POST"], "detach")
    async def detach(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        detached, execution = await svc.detach(principal, execution_id, kind)
        if detached:
            return json_response({"detached": True})
        return json_response({"detached": False, "execution": execution})

    @on("/stream-token", ["POST"], "stream_token")
    async def stream_token(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        await svc.get(principal, execution_id, kind)  # 404 for what the principal cannot see
        token, expires = daemon.browser.stream_token(principal, execution_id)
        return json_response({"streamToken": token, "expiresAt": format_time(expires)})


def _daemon(app: QuartTrio, daemon: Daemon) -> None:
    """The daemon's own routes: health, the exits feed, images, the OpenAPI document."""

    @app.get("/healthz")
    async def healthz() -> Response:
        check_query()
        problem = daemon.health()
        if problem is not None:
            return json_response({"status": "degraded", "reason": problem}, 503)
        return json_response({"status": "ok"})

    @app.get("/v1/exits")
    async def exits() -> Response:
        principal = authenticate(daemon, READ, changes=True)  # it leases: CSRF with a cookie
        check_query(("limit", "waitTimeoutMs", "leaseMs"))
        handed = await daemon.exits.poll(
            principal,
            EXITS_LIMIT.read(),
            EXITS_WAIT.read(),
            EXITS_LEASE.read(),
        )
        return json_response({"exits": handed})

    @app.post("/v1/exits/<delivery_id>/ack")
    async def ack_exit(delivery_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        if not DELIVERY_ID.fullmatch(delivery_id):
            raise NotFound(f"no exit {delivery_id!r}")
        await daemon.exits.ack(principal, delivery_id)
        return Response("", status=204)

    @app.get("/v1/images")
    async def images() -> Response:
        authenticate(daemon, READ)
        check_query()
        return json_response({"images": [image_json(i) for i in daemon.images.values()]})

    @app.get("/openapi.json")
    async def openapi() -> Response:
        # No token needed: the document describes the API and holds nothing of anyone's.
        from api.openapi import document

        check_query()
        return json_response(document())


def _interactive(app: QuartTrio, daemon: Daemon) -> None:
    """Input to a running execution's open stdin or terminal, and its terminal's size."""
    svc = daemon.service
    on = partial(per_execution, app)

    @on("/input", ["POST"], "sendInput")
    async def send_input(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        if request.mimetype == "application/octet-stream":
            check_query(("eof", "record"))
            eof, record = parse_flag("eof", False), parse_flag("record", True)
            await svc.get(principal, execution_id, kind)
            data = await request.get_data(cache=False, as_text=False)
            assert isinstance(data, bytes)
            if len(data) > MAX_INPUT_BYTES:
                raise PayloadTooLarge(f"one input is at most {MAX_INPUT_BYTES} bytes")
        else:
            check_query()
            await svc.get(principal, execution_id, kind)
            body = await parse_body(InputRequest)
            data, eof, record = body.data.encode("utf-8"), body.eof, body.record
            if len(data) > MAX_INPUT_BYTES:
                raise PayloadTooLarge(f"one input is at most {MAX_INPUT_BYTES} bytes")
        await svc.send_input(principal, execution_id, kind, data, eof=eof, record=record)
        return Response("", status=204)

    @on("/resize", ["POST"], "resize")
    async def resize(kind: str | None, execution_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await svc.get(principal, execution_id, kind)
        body = await parse_body(ResizeRequest)
        await svc.resize(principal, execution_id, kind, body.rows, body.cols)
        return Response("", status=204)


def _check_session_query(session_id: str | None) -> None:
    """400 for a `?sessionId=` that no session can have (by the rule a start applies)."""
    if session_id is not None:
        try:
            check_session(session_id)
        except ValueError as exc:
            raise BadRequest(f"query parameter {exc}") from None


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether `If-None-Match` names `etag` (or is `*`); weak tags compare as their strong ones."""
    if header is None:
        return False
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False


def parse_types(raw: str | None) -> frozenset[str] | None:
    """`?types=status,progress` as a set of event types; BadRequest for one that does not exist."""
    if raw is None:
        return None
    types = frozenset(t.strip() for t in raw.split(","))
    unknown = sorted(types - set(EVENT_TYPES))
    if unknown or not raw.strip():
        raise BadRequest(
            f"query parameter types must be event types separated by commas ({', '.join(EVENT_TYPES)})"
            + (f"; not {unknown[0]!r}" if unknown else "")
        )
    return types
