"""Conversions between store rows and wire shapes: execution records, event bodies, times."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence

from workbench.core.store.rows import ArtifactRow, EventBuilder, ExecutionRow, Found, WithData
from workbench.wire.models import Artifact, ErrorInfo, Execution, OutputInfo
from workbench.wire.services import Readiness


def now_ms() -> int:
    """Wall-clock milliseconds since the Unix epoch."""
    return time.time_ns() // 1_000_000


def format_time(ms: int | None) -> str | None:
    """RFC 3339 UTC with milliseconds, e.g. `2026-11-29T12:00:00.123Z`."""
    if ms is None:
        return None
    stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


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
            },
            ensure_ascii=False,
            allow_nan=False,  # a journal of JSON never holds Infinity or NaN
        )

    return build


def execution_from_row(row: ExecutionRow, artifacts: Sequence[ArtifactRow]) -> Execution:
    """The wire record of a store row and its artifact rows."""
    error = None
    if row.error_code is not None:
        error = ErrorInfo(code=row.error_code, message=row.error_message or "")
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
        cwd=row.cwd,
        image=row.image,
        env=json.loads(row.env_json),
        metadata=metadata,
        idempotency_key=row.idempotency_key,
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
        service=row.service,
        readiness=readiness,
        ready_timeout_ms=row.ready_timeout_ms,
        ready=(row.ready_at is not None) if row.service else None,
        ready_at=format_time(row.ready_at),
    )


def execution_from(found: Found) -> Execution:
    return execution_from_row(found.row, found.artifacts)
