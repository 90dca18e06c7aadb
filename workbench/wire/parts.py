"""The parts of an execution's record: its preview, error, capabilities, usage, progress, a
batch's item statuses, output counters and artifacts. `models` re-exports every name."""

from __future__ import annotations

from workbench.wire.base import ExecutionKind, WireModel
from workbench.wire.status import ExecutionStatus


class Preview(WireModel):
    """The head and tail of each output stream (API.md, "Output in the record").

    Each string is at most `previewBytes` bytes of UTF-8: the whole stream when it fits, else its
    first quarter and last three quarters joined by one line `[... N bytes elided ...]`, where
    `*ElidedBytes` is N, in the process's own bytes. Live while running, final at the end.
    """

    stdout: str = ""
    stderr: str = ""
    stdout_elided_bytes: int = 0
    stderr_elided_bytes: int = 0


class ErrorInfo(WireModel):
    """Why an execution failed (`error` of the record and of the terminal event)."""

    code: str
    """`spawn_failed`, `timeout`, `idle_timeout`, `signal`, `oom`, `cpu_limit`, `file_size_limit`,
    `lost`, `internal`, `exception` (a code context's uncaught exception) or `context_dead`."""
    message: str
    traceback: str | None = None
    """The traceback of an `exception` (null otherwise)."""


class Capabilities(WireModel):
    """What can be done with this execution now, computed per execution."""

    cancellable: str = "hard"
    """`hard`: a cancel kills every process of its tree (every item's, for a batch)."""
    streaming_support: bool = True
    """Its events can be followed live (`.../events/stream`)."""
    background_support: bool = True
    """It can run without anyone waiting on it."""
    detachable: bool = True
    """`POST .../detach` would detach it now: false once it has ended or is detached already."""
    interactive: bool | str = False
    """What it takes after its start: false (its input was fixed when it started: `stdin` text
    or none), `"stdin"` (input is open) or `"tty"` (a terminal)."""


class Usage(WireModel):
    """What an ended execution used (null where this machine could not tell).

    From the execution's cgroup where it had one (every process of its tree), else from the
    resource usage of its reaped leader (which holds that of the children it waited for).
    """

    cpu_user_ms: int | None = None
    """CPU time in user mode, in ms (a batch: the sum of its items')."""
    cpu_system_ms: int | None = None
    """CPU time in the kernel, in ms (a batch: the sum of its items')."""
    peak_memory_bytes: int | None = None
    """The most memory it held at once (a batch: the most of one item)."""


class Progress(WireModel):
    """The latest `progress` event of an execution (a `DONE/TOTAL message` line of the file
    named by `$WORKBENCH_PROGRESS`): the record's `progress`, and the changes feed's."""

    progress: float | None = None
    total: float | None = None
    message: str | None = None


class ItemStatus(WireModel):
    """One item of a batch, as the batch's record and its `item` events show it."""

    execution_id: str
    execution_kind: ExecutionKind
    status: ExecutionStatus
    exit_code: int | None = None


class OutputInfo(WireModel):
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    event_bytes: int = 0
    budget_bytes: int
    truncated: bool = False


class Artifact(WireModel):
    name: str
    size_bytes: int
    sha256: str
    content_type: str = "application/octet-stream"
