"""The wire shapes of `API.md` as pydantic models: camelCase on the wire, snake_case in Python.

The daemon builds its responses from these, the client SDK parses responses into them, and the
OpenAPI document is generated from them, so the three cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

# The base classes and names (`base`), the field types, bounds and checks (`fields`) and the
# record's parts (`parts`) live apart; they are names of this module too.
from workbench.wire.actions import SIGNAL_NAMES as SIGNAL_NAMES
from workbench.wire.actions import CancelRequest as CancelRequest
from workbench.wire.actions import InputRequest as InputRequest
from workbench.wire.actions import ResizeRequest as ResizeRequest
from workbench.wire.actions import SignalRequest as SignalRequest
from workbench.wire.actions import WaitRequest as WaitRequest
from workbench.wire.base import EVENT_TYPES as EVENT_TYPES
from workbench.wire.base import EXECUTION_KINDS as EXECUTION_KINDS
from workbench.wire.base import PROCESS_KINDS as PROCESS_KINDS
from workbench.wire.base import EventType as EventType
from workbench.wire.base import ExecutionKind as ExecutionKind
from workbench.wire.base import OnWaitTimeout as OnWaitTimeout
from workbench.wire.base import PreviewFormat as PreviewFormat
from workbench.wire.base import ProcessKind as ProcessKind
from workbench.wire.base import RequestModel as RequestModel
from workbench.wire.base import StreamName as StreamName
from workbench.wire.base import WireModel as WireModel
from workbench.wire.fields import CONTEXT_ID as CONTEXT_ID
from workbench.wire.fields import DEFAULT_PREVIEW_BYTES as DEFAULT_PREVIEW_BYTES
from workbench.wire.fields import ENV_NAME as ENV_NAME
from workbench.wire.fields import EXECUTION_ID as EXECUTION_ID
from workbench.wire.fields import IMAGE_NAME as IMAGE_NAME
from workbench.wire.fields import MAX_ARG_BYTES as MAX_ARG_BYTES
from workbench.wire.fields import MAX_BATCH_ITEMS as MAX_BATCH_ITEMS
from workbench.wire.fields import MAX_CANCEL_REASON as MAX_CANCEL_REASON
from workbench.wire.fields import MAX_PATH_BYTES as MAX_PATH_BYTES
from workbench.wire.fields import MAX_PREVIEW_BYTES as MAX_PREVIEW_BYTES
from workbench.wire.fields import MAX_TIMEOUT_MS as MAX_TIMEOUT_MS
from workbench.wire.fields import MAX_WAIT_TIMEOUT_MS as MAX_WAIT_TIMEOUT_MS
from workbench.wire.fields import SESSION_ID as SESSION_ID
from workbench.wire.fields import Command as Command
from workbench.wire.fields import Cwd as Cwd
from workbench.wire.fields import Env as Env
from workbench.wire.fields import ImageName as ImageName
from workbench.wire.fields import SessionId as SessionId
from workbench.wire.fields import Timestamp as Timestamp
from workbench.wire.fields import at_most as _at_most
from workbench.wire.fields import check_command as _check_command
from workbench.wire.fields import check_env as _check_env
from workbench.wire.fields import check_session as _check_session
from workbench.wire.fields import no_bool as _no_bool
from workbench.wire.fields import no_nul as _no_nul
from workbench.wire.fields import strict_bool as _strict_bool
from workbench.wire.interactive import InteractiveFields, ShellFields, TtySize
from workbench.wire.parts import Artifact as Artifact
from workbench.wire.parts import Capabilities as Capabilities
from workbench.wire.parts import ErrorInfo as ErrorInfo
from workbench.wire.parts import ItemStatus as ItemStatus
from workbench.wire.parts import OutputInfo as OutputInfo
from workbench.wire.parts import Preview as Preview
from workbench.wire.parts import Progress as Progress
from workbench.wire.parts import Usage as Usage
from workbench.wire.services import MAX_READY_TIMEOUT_MS, Readiness, ServiceFields
from workbench.wire.status import ExecutionStatus

assert MAX_READY_TIMEOUT_MS == MAX_TIMEOUT_MS, "a service's ready timeout is bounded like a deadline"


# ---------------------------------------------------------------------------------------------
# Requests


class ExecutionSpec(RequestModel):
    """What an execution runs with, besides its command or code: a start's fields, a batch item's."""

    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """The deadline, counted from acceptance, queueing included (default 3600000)."""
    idle_timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """No output for this long ends it `timed_out` (`error.code` `idle_timeout`)."""
    cwd: Cwd | None = None
    """An absolute working directory that exists (default: the session's workspace)."""
    env: Env = Field(default_factory=dict)
    """Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL. Echoed in
    every record: pass secrets as `secretEnv`."""
    secret_env: Env = Field(default_factory=dict)
    """Variables passed like `env` (and over it) but never returned, logged, journaled or stored:
    the record lists only their names (`secretEnvNames`)."""
    stdin: str | None = None
    """Text fed to the process, then end of file (default: end of file at once)."""
    metadata: Any = None
    """Any JSON, at most 16384 bytes encoded; kept with the record and returned unchanged."""
    image: ImageName = "host"
    """The image to run in (`GET /v1/images`)."""
    session_id: SessionId = "default"
    """The session: its workspace is the default `cwd`. Not `.` or `..`."""
    detached: bool = False
    """Hand the outcome to the exits feed."""
    preview_bytes: int = Field(default=DEFAULT_PREVIEW_BYTES, ge=0, le=MAX_PREVIEW_BYTES)
    """The most bytes of each stream's `preview` in the record (its head and tail beyond that)."""
    preview_format: PreviewFormat = "raw"
    """`plain`: the preview as a terminal shows it (no ANSI escapes, redrawn lines in their last state)."""

    @field_validator("timeout_ms", "idle_timeout_ms", "preview_bytes", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _no_bool(value)

    @field_validator("detached", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        return _strict_bool(value)

    @field_validator("cwd")
    @classmethod
    def _cwd_absolute(cls, value: str | None) -> str | None:
        if value is None:
            return None
        _no_nul(value, "cwd")
        _at_most(value, MAX_PATH_BYTES, "cwd")
        if not value.startswith("/"):
            raise ValueError("cwd must be an absolute path")
        return value

    @field_validator("env", "secret_env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_env(value)

    @model_validator(mode="after")
    def _env_apart(self) -> ExecutionSpec:
        both = sorted(set(self.env) & set(self.secret_env))
        if both:
            raise ValueError(f"{', '.join(both)} given in both env and secretEnv: give each name once")
        return self

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        return _check_session(value)

    @field_validator("image")
    @classmethod
    def _image(cls, value: str) -> str:
        if not IMAGE_NAME.fullmatch(value):
            raise ValueError("image must be a name of letters, digits, '-', '_' or '.'")
        return value


class StartRequest(ExecutionSpec, InteractiveFields):
    """What both execution kinds accept besides their own command or code."""

    background: bool = False
    """false: wait up to `waitTimeoutMs`, then 201 with the record, terminal or not; true: 202 at once."""
    wait_timeout_ms: int | None = Field(default=None, ge=0, le=MAX_WAIT_TIMEOUT_MS)
    """How long a foreground start waits for the end (default 30000)."""
    on_wait_timeout: OnWaitTimeout = "return"
    """Foreground starts: when `waitTimeoutMs` passes, `return` the record, `detach` or `cancel` the run."""
    node: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
    """Run it on this node only (`WORKBENCH_NODE_ID`); default: whichever node has a free slot."""

    @field_validator("wait_timeout_ms", mode="before")
    @classmethod
    def _wait_integer(cls, value: Any) -> Any:
        return _no_bool(value)

    @model_validator(mode="after")
    def _foreground_only(self) -> StartRequest:
        if self.background and self.on_wait_timeout != "return":
            raise ValueError("onWaitTimeout applies to foreground starts only (background is true)")
        return self

    @field_validator("background", mode="before")
    @classmethod
    def _background_bool(cls, value: Any) -> Any:
        return _strict_bool(value)


class StartBashRequest(StartRequest, ServiceFields, ShellFields):
    """`POST /v1/executions/workbench_bash`."""

    command: Command = Field(min_length=1)
    """Run by the image's shell (`bash -c`); at most 131071 bytes (122879 with `persistShell`),
    without NUL."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: str, info: ValidationInfo) -> str:
        return _check_command(value, persist_shell=bool(info.data.get("persist_shell")))


class StartCodeRequest(StartRequest):
    """`POST /v1/executions/workbench_code`."""

    language: str = Field(min_length=1, max_length=64)
    """A language of the image (`bash`, `sh`, `python`, `node` where installed)."""
    code: str
    """The program, written to a file and run by the image's command for `language`; without NUL."""
    context_id: str | None = Field(default=None, pattern=f"^{CONTEXT_ID.pattern}$")
    """Run `code` in this code context (`POST /v1/contexts`): its names persist between
    executions. The context's language, image, session and environment apply: `cwd`, `env`,
    `secretEnv`, `stdin`, `openStdin`, `tty` and `idleTimeoutMs` are refused with it."""

    @field_validator("code")
    @classmethod
    def _code(cls, value: str) -> str:
        return _no_nul(value, "code")

    @model_validator(mode="after")
    def _context_fields(self) -> StartCodeRequest:
        if self.context_id is None:
            return self
        given = [
            name
            for name, value in (
                ("cwd", self.cwd),
                ("env", self.env or None),
                ("secretEnv", self.secret_env or None),
                ("stdin", self.stdin),
                ("idleTimeoutMs", self.idle_timeout_ms),
                # A cell's stdin is the context's: nothing can be typed into one.
                ("openStdin", self.open_stdin or None),
                ("tty", self.tty or None),
            )
            if value is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)} cannot be given with contextId: the context's own apply")
        return self


# ---------------------------------------------------------------------------------------------
# Responses


class Execution(WireModel):
    """The execution record."""

    execution_id: str
    execution_kind: ExecutionKind
    session_id: str
    status: ExecutionStatus
    command: str | None = None
    language: str | None = None
    code: str | None = None
    cwd: str | None = None
    """Its working directory (null for a batch, and while it waits in a shared queue without a
    `cwd` of its own: the node that claims it runs it in the session's workspace there)."""
    image: str | None = None
    """Its image (null for a batch)."""
    env: dict[str, str] = Field(default_factory=dict)
    """The request's own variables, echoed: secrets belong in `secretEnv`."""
    secret_env_names: list[str] = Field(default_factory=list)
    """The names of its `secretEnv` variables (their values are never returned)."""
    metadata: Any = None
    idempotency_key: str | None = None
    row_version: int = 1
    """Grows with every change of the record (`GET` sends it as the `ETag`)."""
    rerun_of: str | None = None
    """The execution it re-runs (`POST .../rerun`)."""
    batch_id: str | None = None
    """The batch it is an item of."""
    items: list[ItemStatus] | None = None
    """A batch's items, in order (null for any other execution)."""
    concurrency: int | None = None
    """A batch's: at most this many of its items run at once."""
    fail_fast: bool | None = None
    """A batch's: the rest are cancelled once an item ends without completing."""
    usage: Usage | None = None
    """What it used, once terminal (null before)."""
    progress: Progress | None = None
    """Its latest `progress` event's numbers and message (kept once it ended); null before one."""
    created_at: Timestamp
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    deadline_at: Timestamp | None = None
    timeout_ms: int | None = None
    idle_timeout_ms: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    error: ErrorInfo | None = None
    cancel_reason: str | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    output: OutputInfo
    artifacts: list[Artifact] = Field(default_factory=list)
    last_sequence: int = 0
    detached: bool = False
    containment: str | None = None
    preview: Preview | None = None
    """The head and tail of stdout and stderr; null in a listing without `?include=preview`."""
    service: bool = False
    readiness: Readiness | None = None
    ready_timeout_ms: int | None = None
    ready: bool | None = None
    """A service: whether it is ready (without a readiness check, once it runs); else null."""
    ready_at: Timestamp | None = None
    context_id: str | None = None
    """The code context it ran in (`contextId` of its start), else null."""
    result: dict[str, str] | None = None
    """In a code context: `{"text/plain": "..."}`, the value of the code's final expression (as
    a notebook shows it), once completed; else null."""
    node_id: str | None = None
    """The node that runs it (null while it waits in a shared queue)."""
    open_stdin: bool = False
    """Its stdin was kept open for `POST .../input` (`capabilities.interactive` says whether it
    still takes input)."""
    tty: bool = False
    """It runs on a pseudo-terminal."""
    tty_size: TtySize | None = None
    """The terminal's current size (null without `tty`)."""
    persist_shell: bool = False
    """It carries its session's shell state (`persistShell`)."""

    @property
    def terminal(self) -> bool:
        return self.status.terminal


class Event(WireModel):
    """One journal event."""

    sequence: int
    event_type: EventType
    status: ExecutionStatus
    timestamp: Timestamp
    stream: StreamName | None = None
    output_delta: str | None = None
    message: str | None = None
    progress: float | None = None
    total: float | None = None
    exit_code: int | None = None
    signal: str | None = None
    error: ErrorInfo | None = None
    item: ItemStatus | None = None
    """An `item` event's: the item of a batch whose status changed, as it is now."""
    input_bytes: int | None = None
    """An `input` event's: how many bytes were written to stdin."""
    input_delta: str | None = None
    """An `input` event's: those bytes as UTF-8 text (U+FFFD for invalid bytes); null when the
    input said `"record": false`."""
    tty_size: TtySize | None = None
    """A `resize` event's: the terminal's new size."""


class ExecutionList(WireModel):
    executions: list[Execution]
    next_cursor: str | None = None


class EventPage(WireModel):
    events: list[Event]
    next_after: int
    terminal: bool


class WaitResult(WireModel):
    execution: Execution
    wait_timed_out: bool


class CancelResult(WireModel):
    cancelled: bool
    execution: Execution


class SignalResult(WireModel):
    """`POST .../signal`: the record once the signal is sent and journaled."""

    execution: Execution


class ArtifactList(WireModel):
    artifacts: list[Artifact]


class ErrorBody(WireModel):
    # `details` is left out when there are none.
    model_config = ConfigDict(json_schema_serialization_defaults_required=False)

    code: str
    message: str
    details: Any = None
    """What exactly was wrong, e.g. `[{"field", "message"}]` for `invalid_request`."""


class ErrorResponse(WireModel):
    error: ErrorBody


class Health(WireModel):
    """`GET /healthz` (200): the daemon takes work. See `Degraded` for the 503."""

    status: str = "ok"


class Degraded(WireModel):
    """The answer of `/healthz` (503) while the daemon refuses new work (a full disk) or cannot
    supervise executions (its shim is being replaced)."""

    status: str = "degraded"
    reason: str


# -- exits, images, detach, live display ------------------------------------------------------


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
    usage: Usage | None = None
    finished_at: Timestamp | None = None
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

    # `execution` comes only when it was not detached.
    model_config = ConfigDict(json_schema_serialization_defaults_required=False)

    detached: bool
    execution: Execution | None = None
    """The record, when it had already ended (`detached: false`)."""


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
    timestamp: Timestamp | None = None
    stream: StreamName | None = None
    output_delta: str | None = None
    missed_bytes: int | None = None
