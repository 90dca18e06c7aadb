"""Accepting executions: a request made into a row, the quotas it must fit, and its secrets.

The service accepts a start, a rerun and a batch through these, so that the three apply one set
of rules: the image, language, working directory, deadline and metadata checks; the queue's
limits and the principal's `maxQueued` (a `429` that names the quota); and `secretEnv`, whose
values go to a file of the execution's directory (mode 0600) that the spawn reads and removes,
never to the store, the journal or a log.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

import pydantic

from workbench.core import interactive, launch, services
from workbench.core.images import Image
from workbench.core.layout import Layout
from workbench.core.live import Slots
from workbench.core.principals import Principal
from workbench.core.records import now_ms
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow
from workbench.wire.errors import InvalidRequest, TooManyExecutions
from workbench.wire.ids import new_execution_id
from workbench.wire.models import ExecutionKind, StartBashRequest, StartCodeRequest
from workbench.wire.starts import RerunRequest
from workbench.wire.status import ExecutionStatus


def field_error(field: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"{field} {message}", details=[{"field": field, "message": message}])


#: Fields added to the start body later, left out of the hash at their defaults: a retry of a
#: request accepted before they existed still finds its execution.
_LATER_FIELDS: dict[str, Any] = {
    "previewBytes": 16384,
    "previewFormat": "raw",
    "onWaitTimeout": "return",
    "secretEnv": {},
    "openStdin": False,
    "tty": False,
    "persistShell": False,
}
_NONE = object()


def request_hash(kind: str, body: Mapping[str, Any]) -> str:
    """The hash an idempotency key's later requests are compared with (`body`: the request's JSON).

    The values of `secretEnv` are left out (their names stay in): a hash of a secret kept in the
    store could be guessed back from it.
    """
    body = {k: v for k, v in body.items() if _LATER_FIELDS.get(k, _NONE) != v}
    canonical = json.dumps(
        [kind, _without_secrets(body)], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _without_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: sorted(v) if k == "secretEnv" and isinstance(v, dict) else _without_secrets(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


def metadata_json(settings: Settings, metadata: Any, field: str = "metadata") -> str | None:
    """`metadata` as stored; InvalidRequest when it is larger than the daemon keeps."""
    if metadata is None:
        return None
    text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > settings.max_metadata_bytes:
        raise field_error(field, f"must be at most {settings.max_metadata_bytes} bytes of JSON")
    return text


def timeout_of(settings: Settings, requested: int | None) -> int:
    """The deadline of a new execution in ms: the one asked for, else the daemon's default."""
    timeout_ms = requested if requested is not None else settings.default_timeout_ms
    if timeout_ms > settings.max_timeout_ms:
        raise field_error("timeoutMs", f"must be at most {settings.max_timeout_ms} (24 hours)")
    return timeout_ms


def new_row(
    settings: Settings,
    images: dict[str, Image],
    principal: Principal,
    req: StartBashRequest | StartCodeRequest,
    idempotency_key: str | None,
    request_hash: str | None,
    *,
    now: int | None = None,
    deadline_at: int | None = None,
    batch_id: str | None = None,
    rerun_of: str | None = None,
) -> ExecutionRow:
    """The row of a new execution of `req`, checked (InvalidRequest and its kin say what is wrong).

    `deadline_at` caps its deadline (a batch's: no item runs past it).
    """
    kind: ExecutionKind = "workbench_bash" if isinstance(req, StartBashRequest) else "workbench_code"
    image = launch.resolve_image(images, req.image)
    if isinstance(req, StartCodeRequest):
        launch.resolve_language(image, req.language)
    # A service has no deadline unless it asks for one (0 is none).
    timeout_ms, service_fields = services.row_fields(req, settings.default_timeout_ms)
    timeout_of(settings, timeout_ms)
    if req.idle_timeout_ms is not None and req.idle_timeout_ms > settings.max_timeout_ms:
        raise field_error("idleTimeoutMs", f"must be at most {settings.max_timeout_ms}")
    cwd = launch.resolve_cwd(image, settings.layout.workspace(principal.name, req.session_id), req.cwd)
    now = now if now is not None else now_ms()
    own = services.deadline_at(now, timeout_ms)
    deadline = own if deadline_at is None else min(own, deadline_at)
    row = ExecutionRow(
        id=new_execution_id(),
        kind=kind,
        principal=principal.name,
        session_id=req.session_id,
        status=ExecutionStatus.QUEUED,
        command=req.command if isinstance(req, StartBashRequest) else None,
        language=req.language if isinstance(req, StartCodeRequest) else None,
        code=req.code if isinstance(req, StartCodeRequest) else None,
        cwd=cwd,
        image=image.name,
        env_json=json.dumps(req.env, ensure_ascii=False),
        secret_env_names_json=json.dumps(sorted(req.secret_env)) if req.secret_env else None,
        stdin=req.stdin,
        metadata_json=metadata_json(settings, req.metadata),
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        created_at=now,
        deadline_at=deadline,
        timeout_ms=timeout_ms,
        idle_timeout_ms=req.idle_timeout_ms,
        budget_bytes=settings.execution_event_output_budget_bytes,
        detached=req.detached,
        batch_id=batch_id,
        rerun_of=rerun_of,
        preview_bytes=req.preview_bytes,
        preview_format=req.preview_format,
        **service_fields,
        **interactive.row_fields(req),
    )
    # With a shared store, a start that names its cwd (a directory of this host) or has secrets
    # runs here; one that does not runs in the session's workspace of the node that claims it,
    # which fills in `cwd` (empty until then).
    pinned = bool(req.secret_env) or batch_id is not None or req.cwd is not None
    row.node_id, row.node_pin = placement(settings, getattr(req, "node", None), pinned=pinned)
    if row.node_id is None and req.cwd is None and row.node_pin != settings.node_id:
        row.cwd = ""
    return row


def placement(settings: Settings, node: str | None, *, pinned: bool = False) -> tuple[str | None, str | None]:
    """Where a new execution runs: `node_id` (set at once by a store of one node) and `node_pin`.

    With a shared store it waits unclaimed in the shared queue, for the pinned node only when it
    asked for one; `pinned`: it must run here (its `secretEnv` values are in this node's data dir;
    a batch's items run beside their batch).

    Raises:
        InvalidRequest: a pin to another node when the store serves this node only.
    """
    here = settings.node_id
    if settings.store_url is None:
        if node is not None and node != here:
            raise field_error("node", f"this daemon is the only node ({here!r}); it has no node {node!r}")
        return here, None
    if pinned and node is not None and node != here:
        raise field_error("node", f"a start with cwd or secretEnv runs on the node that takes it ({here!r})")
    return None, (here if pinned else node)


def check_room(
    settings: Settings,
    slots: Slots,
    principal: Principal,
    count: int,
    shared: tuple[int, int] | None = None,
    *,
    room: int | None = None,
) -> None:
    """Refuse `count` new executions that would wait past the queue's limit or the principal's.

    `shared`: how many wait in a shared store's queue, in all and of this principal (else the
    local queue's counts are used). `room`: how many of them could run at once (else as many
    as the principal's quota and the daemon's free slots allow).

    Raises:
        TooManyExecutions: naming the quota (`details.quota`) and its limit.
    """
    waiting = max(0, count - (slots.room((principal.key,)) if room is None else room))
    if not waiting:
        return
    limit = principal.max_queued
    queued = slots.queued_by[principal.key] if shared is None else shared[1]
    total = slots.queued if shared is None else shared[0]
    if limit is not None and queued + waiting > limit:
        raise TooManyExecutions(
            f"the principal {principal.name!r} has {queued} executions waiting for a slot and its "
            f"maxQueued quota is {limit}; try again later",
            details={"quota": "maxQueued", "principal": principal.name, "limit": limit, "queued": queued},
        )
    limit = settings.max_queued_executions
    if total + waiting > limit:
        raise TooManyExecutions(
            f"{total} executions are waiting for a slot and WORKBENCH_MAX_QUEUED_EXECUTIONS "
            f"is {limit}; try again later",
            details={"quota": "WORKBENCH_MAX_QUEUED_EXECUTIONS", "limit": limit, "queued": total},
        )


def rerun_spec(original: ExecutionRow, req: RerunRequest) -> StartBashRequest | StartCodeRequest:
    """The start body of a rerun: the original's spec (its stdin too), with `req`'s fields in place.

    Raises:
        InvalidRequest: a field the original's kind does not take, a `secretEnv` name of the
            original whose value is not given again (values are never kept), or a batch.
    """
    if original.kind == "batch":
        message = "a batch is not rerun as a whole: rerun its items, or start the batch again"
        raise InvalidRequest(message, details=[{"field": "executionId", "message": message}])
    given = req.model_fields_set
    if original.kind == "workbench_bash" and "code" in given:
        raise field_error("code", "is for a workbench_code execution; this one runs a command")
    if original.kind == "workbench_code" and "command" in given:
        raise field_error("command", "is for a workbench_bash execution; this one runs code")
    secret = req.secret_env or {}
    missing = [n for n in json.loads(original.secret_env_names_json or "[]") if n not in secret]
    if missing:
        raise field_error(
            "secretEnv",
            f"must give {', '.join(missing)} again: the original ran with them, and secretEnv values "
            "are never kept",
        )
    metadata = json.loads(original.metadata_json) if original.metadata_json is not None else None
    body: dict[str, Any] = {
        "background": req.background,
        "timeoutMs": req.timeout_ms if req.timeout_ms is not None else original.timeout_ms,
        "idleTimeoutMs": req.idle_timeout_ms if req.idle_timeout_ms is not None else original.idle_timeout_ms,
        "cwd": req.cwd if req.cwd is not None else original.cwd,
        "env": req.env if req.env is not None else json.loads(original.env_json),
        "secretEnv": secret,
        "stdin": req.stdin if "stdin" in given else original.stdin,
        "metadata": req.metadata if "metadata" in given else metadata,
        "image": req.image if req.image is not None else original.image,
        "sessionId": req.session_id if req.session_id is not None else original.session_id,
        "detached": req.detached if req.detached is not None else original.detached,
        "previewBytes": original.preview_bytes,
        "previewFormat": original.preview_format,
    }
    if original.service:
        # A service again: its readiness too; its "no deadline" (0) is left out to mean the same.
        body["service"] = True
        body["readiness"] = json.loads(original.readiness_json) if original.readiness_json else None
        body["readyTimeoutMs"] = original.ready_timeout_ms
        if req.timeout_ms is None and original.timeout_ms == 0:
            del body["timeoutMs"]
    body |= interactive.rerun_fields(original)
    if req.wait_timeout_ms is not None:
        body["waitTimeoutMs"] = req.wait_timeout_ms
    body = {k: v for k, v in body.items() if v is not None}
    model: type[StartBashRequest | StartCodeRequest]
    if original.kind == "workbench_bash":
        model = StartBashRequest
        body["command"] = req.command if req.command is not None else original.command
    else:
        model = StartCodeRequest
        body["language"] = original.language
        body["code"] = req.code if req.code is not None else original.code
    try:
        return model.model_validate(body)
    except pydantic.ValidationError as exc:
        details = [
            {
                "field": ".".join(str(p) for p in err["loc"]),
                "message": err["msg"].removeprefix("Value error, "),
            }
            for err in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{d['field']}: {d['message']}" for d in details)
        raise InvalidRequest(f"invalid rerun: {summary}", details=details) from None


# -- secretEnv -----------------------------------------------------------------------------------


def write_secrets(layout: Layout, row: ExecutionRow, values: Mapping[str, str]) -> None:
    """Keep a new execution's `secretEnv` values for its spawn (before its row is committed, so
    that a daemon that dies right after still has them). Blocking, small."""
    directory = layout.execution(row.id)
    directory.path.mkdir(mode=0o700, parents=True, exist_ok=True)
    launch.write_private(directory.secret_env, json.dumps(dict(values)).encode("utf-8"))


def write_all_secrets(layout: Layout, rows: list[tuple[ExecutionRow, dict[str, str]]]) -> None:
    """`write_secrets` for each (row, values); what was written is removed again if one fails."""
    done: list[tuple[ExecutionRow, dict[str, str]]] = []
    try:
        for row, values in rows:
            write_secrets(layout, row, values)
            done.append((row, values))
    except BaseException:
        drop_all_secrets(layout, done)
        raise


def drop_all_secrets(layout: Layout, rows: list[tuple[ExecutionRow, dict[str, str]]]) -> None:
    for row, _ in rows:
        drop_secrets(layout, row)


def drop_secrets(layout: Layout, row: ExecutionRow) -> None:
    """Remove what `write_secrets` wrote for an execution that was not accepted after all."""
    directory = layout.execution(row.id)
    directory.secret_env.unlink(missing_ok=True)
    try:
        os.rmdir(directory.path)
    except OSError:
        pass
