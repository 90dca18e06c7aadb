"""The wire shapes of `API.md` as pydantic models: camelCase on the wire, snake_case in Python.

The daemon builds its responses from these, the client SDK parses responses into them, and the
OpenAPI document is generated from them, so the three cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator
from pydantic.alias_generators import to_camel

from workbench.wire.services import MAX_READY_TIMEOUT_MS, Readiness, ServiceFields
from workbench.wire.status import ExecutionStatus

ExecutionKind = Literal["workbench_bash", "workbench_code"]
EXECUTION_KINDS: tuple[str, ...] = ("workbench_bash", "workbench_code")
EventType = Literal["status", "output", "output_truncated", "progress", "artifact", "ready"]
StreamName = Literal["stdout", "stderr"]

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
IMAGE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
EXECUTION_ID = re.compile(r"ex_[0-9A-HJKMNP-TV-Z]{26}")
#: The kernel's limit on one argument or one `NAME=value` of the environment (MAX_ARG_STRLEN,
#: NUL included): a longer command or variable could only fail at spawn, so it is refused up front.
MAX_ARG_BYTES = 128 * 1024 - 1
#: The longest path the kernel takes (PATH_MAX, NUL included).
MAX_PATH_BYTES = 4096 - 1
#: The longest long-poll (`waitTimeoutMs`) and the longest deadline (`timeoutMs`, `idleTimeoutMs`);
#: the daemon's settings hold the same values (`max_wait_timeout_ms`, `max_timeout_ms`).
MAX_WAIT_TIMEOUT_MS = 600_000
MAX_TIMEOUT_MS = 86_400_000
MAX_CANCEL_REASON = 1000
assert MAX_READY_TIMEOUT_MS == MAX_TIMEOUT_MS, "a service's ready timeout is bounded like a deadline"

#: An RFC 3339 UTC time with milliseconds, e.g. `2026-11-29T12:00:00.123Z`.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


def _string(**keywords: Any) -> Any:
    """The JSON schema of a request string checked by a validator below (which a schema cannot run)."""
    return WithJsonSchema({"type": "string", **keywords}, mode="validation")


# The limits of `command` and of `env` values count UTF-8 bytes, which `maxLength` (characters)
# cannot say: they are in the descriptions.
Command = Annotated[str, _string(minLength=1)]
Cwd = Annotated[str, _string(pattern="^/", maxLength=MAX_PATH_BYTES)]
Env = Annotated[
    dict[str, str],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": f"^{ENV_NAME.pattern}$"},
            "additionalProperties": {"type": "string"},
        },
        mode="validation",
    ),
]
SessionId = Annotated[str, _string(pattern=f"^{SESSION_ID.pattern}$")]
ImageName = Annotated[str, _string(pattern=f"^{IMAGE_NAME.pattern}$")]


class WireModel(BaseModel):
    """camelCase aliases on the wire; attributes by their Python names too."""

    # Responses carry every field, defaults included: the schema says they are always there.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        use_attribute_docstrings=True,
        json_schema_serialization_defaults_required=True,
    )

    def wire(self) -> dict[str, Any]:
        """The JSON-able dict of this model as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True)


class RequestModel(WireModel):
    """A request body: unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
    )


# ---------------------------------------------------------------------------------------------
# Requests


def _no_nul(value: str, what: str) -> str:
    if "\x00" in value:
        raise ValueError(f"{what} must not contain NUL bytes")
    return value


def _at_most(value: str, limit: int, what: str) -> str:
    if len(value) > limit // 4 and len(value.encode("utf-8", errors="surrogatepass")) > limit:
        raise ValueError(f"{what} must be at most {limit} bytes")
    return value


def _no_bool(value: Any) -> Any:
    # JSON true or "100" is not a number of milliseconds, whatever lax parsing would make of it.
    if isinstance(value, bool | str):
        raise ValueError(f"must be an integer, not a {'boolean' if isinstance(value, bool) else 'string'}")
    return value


class StartRequest(RequestModel):
    """What both execution kinds accept besides their own command or code."""

    background: bool = False
    """false: wait up to `waitTimeoutMs`, then 201 with the record, terminal or not; true: 202 at once."""
    wait_timeout_ms: int | None = Field(default=None, ge=0, le=MAX_WAIT_TIMEOUT_MS)
    """How long a foreground start waits for the end (default 30000)."""
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """The deadline, counted from acceptance, queueing included (default 3600000)."""
    idle_timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """No output for this long ends it `timed_out` (`error.code` `idle_timeout`)."""
    cwd: Cwd | None = None
    """An absolute working directory that exists (default: the session's workspace)."""
    env: Env = Field(default_factory=dict)
    """Variables over the image's; each `NAME=value` at most 131071 bytes, without NUL."""
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

    @field_validator("wait_timeout_ms", "timeout_ms", "idle_timeout_ms", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _no_bool(value)

    @field_validator("background", "detached", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        # "yes", 1 or "false" are not JSON booleans; lax parsing would read "false" as False.
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value

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

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, item in value.items():
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"env name {name!r} must match [A-Za-z_][A-Za-z0-9_]*")
            _no_nul(item, f"env value of {name}")
            _at_most(f"{name}={item}", MAX_ARG_BYTES, f"env {name}=value")
        return value

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        if not SESSION_ID.fullmatch(value) or value in {".", ".."}:
            raise ValueError(
                "sessionId must be 1 to 64 letters, digits, '-', '_' or '.', and not '.' or '..'"
            )
        return value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str) -> str:
        if not IMAGE_NAME.fullmatch(value):
            raise ValueError("image must be a name of letters, digits, '-', '_' or '.'")
        return value


class StartBashRequest(StartRequest, ServiceFields):
    """`POST /v1/executions/workbench_bash`."""

    command: Command = Field(min_length=1)
    """Run by the image's shell (`bash -c`); at most 131071 bytes, without NUL."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        # Longer commands belong in workbench_code, which runs them from a file.
        return _at_most(_no_nul(value, "command"), MAX_ARG_BYTES, "command")


class StartCodeRequest(StartRequest):
    """`POST /v1/executions/workbench_code`."""

    language: str = Field(min_length=1, max_length=64)
    """A language of the image (`bash`, `sh`, `python`, `node` where installed)."""
    code: str
    """The program, written to a file and run by the image's command for `language`; without NUL."""

    @field_validator("code")
    @classmethod
    def _code(cls, value: str) -> str:
        return _no_nul(value, "code")


class WaitRequest(RequestModel):
    """`POST .../wait`."""

    wait_timeout_ms: int | None = Field(default=None, ge=0, le=MAX_WAIT_TIMEOUT_MS)
    """How long to wait for the end (default 30000)."""
    until: Literal["end", "ready"] = "end"
    """`end`: until it is terminal; `ready`: until it is ready (a service) or terminal."""

    @field_validator("wait_timeout_ms", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _no_bool(value)


class CancelRequest(RequestModel):
    """`POST .../cancel`."""

    reason: str | None = Field(default=None, max_length=MAX_CANCEL_REASON)
    """Kept in the record as `cancelReason`."""
    grace_ms: int = Field(default=0, ge=0, le=600_000)
    """Send SIGTERM first and wait up to this long before SIGKILL (default 0: SIGKILL at once)."""

    @field_validator("grace_ms", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _no_bool(value)


# ---------------------------------------------------------------------------------------------
# Responses


class ErrorInfo(WireModel):
    """Why an execution failed (`error` of the record and of the terminal event)."""

    code: str
    """`spawn_failed`, `timeout`, `idle_timeout`, `signal`, `oom`, `cpu_limit`, `file_size_limit`,
    `lost` or `internal`."""
    message: str


class Capabilities(WireModel):
    cancellable: str = "hard"
    streaming_support: bool = True
    background_support: bool = True


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


class Execution(WireModel):
    """The execution record."""

    execution_id: str
    execution_kind: ExecutionKind
    session_id: str
    status: ExecutionStatus
    command: str | None = None
    language: str | None = None
    code: str | None = None
    cwd: str
    image: str
    env: dict[str, str] = Field(default_factory=dict)
    metadata: Any = None
    idempotency_key: str | None = None
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
    service: bool = False
    readiness: Readiness | None = None
    ready_timeout_ms: int | None = None
    ready: bool | None = None
    """A service: whether it is ready (without a readiness check, once it runs); else null."""
    ready_at: Timestamp | None = None

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
    status: str = "ok"


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
