"""Conversions between store rows and wire shapes: execution records, event bodies, times."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from workbench.core.preview import stored_preview
from workbench.core.store.rows import ArtifactRow, EventBuilder, ExecutionRow, Found, ItemRow, WithData
from workbench.wire.interactive import TtySize
from workbench.wire.models import (
    Artifact,
    Capabilities,
    ErrorInfo,
    Execution,
    ItemStatus,
    OutputInfo,
    Preview,
    Progress,
    Usage,
)
from workbench.wire.services import Readiness
from workbench.wire.status import ExecutionStatus


def now_ms() -> int:
    """Wall-clock milliseconds since the Unix epoch."""
    return time.time_ns() // 1_000_000


def format_time(ms: int | None) -> str | None:
    """RFC 3339 UTC with milliseconds, e.g. `2026-11-29T12:00:00.123Z`."""
    if ms is None:
        return None
    second, millis = divmod(ms, 1000)
    return f"{_second_text(second)}{millis:03d}Z"


@lru_cache(maxsize=1024)
def _second_text(second: int) -> str:
    """`2026-11-29T12:00:00.` for a second since the epoch: made once per second (a record's
    times are formatted at every read of it, and `strftime` takes some 4 µs)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))


def event_builder(
    event_type: str,
    *,
    timestamp: int | None = None,
    stream: str | None = None,
    output_delta: str | None = None,
    message: str | None = None,
    progress: float | None = None,
    total: float | None = None,
    exit_code: int | None = None,
    signal: str | None = None,
    error: dict[str, str] | None = None,
    item: dict[str, Any] | None = None,
    input_bytes: int | None = None,
    input_delta: str | None = None,
    tty_size: dict[str, int] | None = None,
) -> EventBuilder:
    """A function that renders the event's JSON once the store has given it a sequence and status."""
    at = timestamp if timestamp is not None else now_ms()
    stamp = format_time(at)
    if output_delta is not None:
        # Stored as bytes beside the body (see `WithData`); the body holds null in its place.
        data = output_delta.encode("utf-8")
        rest = event_builder(
            event_type,
            timestamp=at,
            stream=stream,
            message=message,
            progress=progress,
            total=total,
            exit_code=exit_code,
            signal=signal,
            error=error,
            input_bytes=input_bytes,
            input_delta=input_delta,
            tty_size=tty_size,
        )
        return WithData(rest, data)

    def build(sequence: int, status: str) -> str:
        return json.dumps(
            {
                "sequence": sequence,
                "eventType": event_type,
                "status": status,
                "timestamp": stamp,
                "stream": stream,
                "outputDelta": output_delta,
                "message": message,
                "progress": progress,
                "total": total,
                "exitCode": exit_code,
                "signal": signal,
                "error": error,
                "item": item,
                "inputBytes": input_bytes,
                "inputDelta": input_delta,
                "ttySize": tty_size,
            },
            ensure_ascii=False,
            allow_nan=False,  # a journal of JSON never holds Infinity or NaN
        )

    return build


def item_event(row: ExecutionRow) -> EventBuilder:
    """The `item` event of a batch's journal for one of its items, as the item is now."""
    message = f"{row.id} {row.status.value}"
    if row.exit_code is not None:
        message += f" (exit {row.exit_code})"
    return event_builder(
        "item", message=message, item=_item_json(row.id, row.kind, row.status.value, row.exit_code)
    )


def _item_json(execution_id: str, kind: str, status: str, exit_code: int | None) -> dict[str, Any]:
    return {"executionId": execution_id, "executionKind": kind, "status": status, "exitCode": exit_code}


def capabilities(row: ExecutionRow) -> Capabilities:
    """What can be done with this execution now (`Capabilities`)."""
    # Detaching is possible until it ends, and means something only once. Input is taken while
    # it runs: on its terminal (an end of file there is a Ctrl-D, not a close), or on its open
    # stdin until an end of file closed it.
    interactive: bool | str = False
    if row.status is ExecutionStatus.RUNNING:
        if row.tty_json is not None:
            interactive = "tty"
        elif row.open_stdin and not row.stdin_closed:
            interactive = "stdin"
    return Capabilities(detachable=not row.status.terminal and not row.detached, interactive=interactive)


def usage_of(row: ExecutionRow) -> Usage | None:
    """A terminal record's usage (null before it ends)."""
    if not row.status.terminal:
        return None
    return Usage(
        cpu_user_ms=row.cpu_user_ms, cpu_system_ms=row.cpu_system_ms, peak_memory_bytes=row.peak_memory_bytes
    )


def progress_of(row: ExecutionRow) -> Progress | None:
    """The numbers and message of its latest `progress` event, kept in its row with the event."""
    if row.progress_json is None:
        return None
    event = json.loads(row.progress_json)
    return Progress(progress=event.get("progress"), total=event.get("total"), message=event.get("message"))


def usage_fields(items: Sequence[ItemRow]) -> dict[str, int | None]:
    """A batch's usage columns: its items' CPU times summed, the most memory one item held."""

    def total(values: list[int | None]) -> int | None:
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    peaks = [i.peak_memory_bytes for i in items if i.peak_memory_bytes is not None]
    return {
        "cpu_user_ms": total([i.cpu_user_ms for i in items]),
        "cpu_system_ms": total([i.cpu_system_ms for i in items]),
        "peak_memory_bytes": max(peaks) if peaks else None,
    }


def execution_from_row(
    row: ExecutionRow,
    artifacts: Sequence[ArtifactRow],
    items: Sequence[ItemRow] | None = None,
    preview: Preview | None = None,
) -> Execution:
    """The wire record of a store row, its artifact rows, (a batch's) item rows and `preview`."""
    error = None
    if row.error_code is not None:
        error = ErrorInfo(code=row.error_code, message=row.error_message or "", traceback=row.error_traceback)
    metadata = json.loads(row.metadata_json) if row.metadata_json is not None else None
    # A service started without `timeoutMs` has no deadline (stored as timeout 0).
    has_deadline = row.timeout_ms > 0
    readiness = Readiness.model_validate_json(row.readiness_json) if row.readiness_json else None
    return Execution(
        execution_id=row.id,
        execution_kind=row.kind,
        session_id=row.session_id,
        status=row.status,
        command=row.command,
        language=row.language,
        code=row.code,
        cwd=row.cwd if row.kind != "batch" and row.cwd else None,
        image=row.image if row.kind != "batch" else None,
        env=json.loads(row.env_json),
        secret_env_names=json.loads(row.secret_env_names_json) if row.secret_env_names_json else [],
        metadata=metadata,
        idempotency_key=row.idempotency_key,
        row_version=row.row_version,
        rerun_of=row.rerun_of,
        batch_id=row.batch_id,
        node_id=row.node_id,
        items=None
        if row.kind != "batch"
        else [
            ItemStatus(execution_id=i.id, execution_kind=i.kind, status=i.status, exit_code=i.exit_code)
            for i in items or ()
        ],
        concurrency=row.concurrency,
        fail_fast=row.fail_fast if row.kind == "batch" else None,
        usage=usage_of(row),
        progress=progress_of(row),
        created_at=format_time(row.created_at) or "",
        started_at=format_time(row.started_at),
        finished_at=format_time(row.finished_at),
        deadline_at=format_time(row.deadline_at) if has_deadline else None,
        timeout_ms=row.timeout_ms if has_deadline else None,
        idle_timeout_ms=row.idle_timeout_ms,
        exit_code=row.exit_code,
        signal=row.signal,
        error=error,
        cancel_reason=row.cancel_reason,
        capabilities=capabilities(row),
        output=OutputInfo(
            stdout_bytes=row.stdout_bytes,
            stderr_bytes=row.stderr_bytes,
            event_bytes=row.event_bytes,
            budget_bytes=row.budget_bytes,
            truncated=row.truncated,
        ),
        artifacts=[
            Artifact(name=a.name, size_bytes=a.size_bytes, sha256=a.sha256, content_type=a.content_type)
            for a in artifacts
        ],
        last_sequence=row.last_sequence,
        detached=row.detached,
        containment=row.containment,
        preview=preview,
        service=row.service,
        readiness=readiness,
        ready_timeout_ms=row.ready_timeout_ms,
        ready=(row.ready_at is not None) if row.service else None,
        ready_at=format_time(row.ready_at),
        context_id=row.context_id,
        result=_result(row.result_json),
        open_stdin=row.open_stdin,
        tty=row.tty_json is not None,
        tty_size=TtySize.model_validate_json(row.tty_json) if row.tty_json else None,
        persist_shell=row.persist_shell,
    )


def escaped(text: object) -> str:
    """An interpreter's text as a record holds it: a lone surrogate (a string cut inside a pair,
    a name of undecodable bytes) escaped as `\\udcff`, as Python writes one to a stream; JSON
    carries it, but no record could be encoded with it."""
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8")


def _result(text: str | None) -> dict[str, Any] | None:
    """A cell's stored value. A store written before values were escaped may hold a lone surrogate
    as a JSON escape (`\\ud800`): it is read escaped, as a value is kept now (no record could be
    encoded with it)."""
    if not text:
        return None
    value: dict[str, Any] = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        for key, shown in value.items():
            if isinstance(shown, str):
                value[key] = escaped(shown)
    return value


def execution_from(found: Found, preview: Preview | None = None) -> Execution:
    return execution_from_row(found.row, found.artifacts, found.items, preview)


def final_record(found: Found) -> Execution:
    """The record of a terminal execution, with the preview kept at its end."""
    return execution_from(found, stored_preview(found.row))
