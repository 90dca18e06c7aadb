"""Wire shapes of `API.md` that `workbench.models` does not hold yet: exits, images, detach, live events.

They follow the same rules (camelCase on the wire, snake_case attributes, frozen) and feed the
OpenAPI document too. Unknown extra fields from a newer daemon are ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from workbench.models import ErrorInfo, Execution, ExecutionKind, StreamName, WireModel
from workbench.status import ExecutionStatus


class Exit(WireModel):
    """One delivery of the exits feed: the outcome of a detached execution."""

    delivery_id: str
    execution_id: str
    execution_kind: ExecutionKind
    status: ExecutionStatus
    exit_code: int | None = None
    signal: str | None = None
    error: ErrorInfo | None = None
    metadata: Any = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    finished_at: str | None = None
    attempt: int = 1


class ExitList(WireModel):
    """`GET /v1/exits`."""

    exits: list[Exit]


class ImageIsolation(WireModel):
    filesystem: str
    network: bool
    pid_namespace: bool


class Image(WireModel):
    """What an execution can run in (`GET /v1/images`)."""

    name: str
    description: str = ""
    languages: list[str]
    isolation: ImageIsolation
    available: bool
    unavailable_reason: str | None = None


class ImageList(WireModel):
    images: list[Image]


class DetachResult(WireModel):
    """`POST .../detach`: detached, or not because it had already ended (then with its record)."""

    detached: bool
    execution: Execution | None = None


class LiveEvent(WireModel):
    """Past the output budget, what a live follower sees that is not in the journal.

    `event_type` is `output` for a display update (`stream` and `output_delta` set) or `gap` when
    a slow follower missed `missed_bytes` of display output. `sequence` is always None: that is
    the flag that tells these apart from journal events. They are not replayed; the artifacts
    `stdout` and `stderr` hold every byte.
    """

    sequence: None = None
    event_type: Literal["output", "gap"]
    status: ExecutionStatus = ExecutionStatus.RUNNING
    timestamp: str | None = None
    stream: StreamName | None = None
    output_delta: str | None = None
    missed_bytes: int | None = None
