"""The bodies that start many executions at once (`POST /v1/executions/batch`) or one again
(`POST .../rerun`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from workbench.wire.fields import (
    MAX_BATCH_ITEMS,
    MAX_TIMEOUT_MS,
    MAX_WAIT_TIMEOUT_MS,
    Command,
    Cwd,
    Env,
    ImageName,
    SessionId,
    check_command,
    check_env,
    check_session,
    no_bool,
    no_nul,
    strict_bool,
)
from workbench.wire.models import (
    ExecutionSpec,
    ProcessKind,
    RequestModel,
    StartBashRequest,
    StartCodeRequest,
)


class BatchItemRequest(ExecutionSpec):
    """One item of `POST /v1/executions/batch`: a start body with its `kind`, without
    `background` and `waitTimeoutMs` (the batch's own decide)."""

    kind: ProcessKind
    """`workbench_bash` (with `command`) or `workbench_code` (with `language` and `code`)."""
    command: Command | None = None
    """For `workbench_bash`: as in a bash start."""
    language: str | None = Field(default=None, min_length=1, max_length=64)
    """For `workbench_code`: as in a code start."""
    code: str | None = None
    """For `workbench_code`: as in a code start."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: str | None) -> str | None:
        return None if value is None else check_command(value)

    @field_validator("code")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        return None if value is None else no_nul(value, "code")

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> BatchItemRequest:
        if self.kind == "workbench_bash":
            if self.command is None or self.language is not None or self.code is not None:
                raise ValueError("a workbench_bash item takes command (and not language or code)")
        elif self.language is None or self.code is None or self.command is not None:
            raise ValueError("a workbench_code item takes language and code (and not command)")
        return self

    def as_start(self) -> StartBashRequest | StartCodeRequest:
        """The start body this item stands for (in the background: the batch waits, not the item)."""
        body = self.model_dump(by_alias=True, exclude_unset=True, exclude={"kind"})
        if self.kind == "workbench_bash":
            return StartBashRequest.model_validate({**body, "background": True})
        return StartCodeRequest.model_validate({**body, "background": True})


class BatchRequest(RequestModel):
    """`POST /v1/executions/batch`: many executions accepted as one, all or none."""

    items: list[BatchItemRequest] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
    """1 to 1000 start bodies, each with its `kind`."""
    concurrency: int | None = Field(default=None, ge=1, le=MAX_BATCH_ITEMS)
    """At most this many of its items run at once (default: as many as the daemon runs at once)."""
    fail_fast: bool = False
    """When an item ends without completing, cancel the rest; the batch ends `failed`."""
    background: bool = False
    """As a start's: 202 at once, or wait up to `waitTimeoutMs` for the end and answer 201."""
    wait_timeout_ms: int | None = Field(default=None, ge=0, le=MAX_WAIT_TIMEOUT_MS)
    """How long a foreground batch start waits for the end (default 30000)."""
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """The batch's deadline from acceptance (default 3600000); no item runs past it."""
    metadata: Any = None
    """Any JSON, at most 16384 bytes encoded, kept with the batch's record."""
    session_id: SessionId = "default"
    """The batch's own session (for listings); each item has its own."""
    detached: bool = False
    """Hand the batch's outcome to the exits feed."""

    @field_validator("concurrency", "wait_timeout_ms", "timeout_ms", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return no_bool(value)

    @field_validator("fail_fast", "background", "detached", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        return strict_bool(value)

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        return check_session(value)


class RerunRequest(RequestModel):
    """`POST .../rerun`: the execution's spec again; each field given replaces the original's."""

    background: bool = False
    """As a start's."""
    wait_timeout_ms: int | None = Field(default=None, ge=0, le=MAX_WAIT_TIMEOUT_MS)
    """As a start's (default 30000)."""
    command: Command | None = None
    """A bash execution's command instead of the original's."""
    code: str | None = None
    """A code execution's code instead of the original's (its language stays)."""
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """Instead of the original's `timeoutMs`, counted from the rerun's acceptance."""
    idle_timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """Instead of the original's."""
    cwd: Cwd | None = None
    """Instead of the original's."""
    env: Env | None = None
    """Instead of the original's (the whole object)."""
    secret_env: Env | None = None
    """The values of the original's `secretEnvNames` (never kept, so a rerun needs them again)."""
    stdin: str | None = None
    """Instead of the original's (which is kept, and fed again by default)."""
    metadata: Any = None
    """Instead of the original's."""
    image: ImageName | None = None
    """Instead of the original's."""
    session_id: SessionId | None = None
    """Instead of the original's."""
    detached: bool | None = None
    """Instead of the original's."""

    @field_validator("wait_timeout_ms", "timeout_ms", "idle_timeout_ms", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return no_bool(value)

    @field_validator("background", "detached", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        return value if value is None else strict_bool(value)

    @field_validator("command")
    @classmethod
    def _command(cls, value: str | None) -> str | None:
        return None if value is None else check_command(value)

    @field_validator("code")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        return None if value is None else no_nul(value, "code")

    @field_validator("env", "secret_env")
    @classmethod
    def _env_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else check_env(value)

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        return None if value is None else check_session(value)
