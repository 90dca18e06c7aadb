"""The wire shapes of code contexts: long-lived interpreters that keep their names between
executions (see `docs/api.md`, "Code contexts")."""

from __future__ import annotations

from pydantic import Field, field_validator

from workbench.wire.fields import IMAGE_NAME, MAX_TIMEOUT_MS, Env, ImageName, SessionId, Timestamp
from workbench.wire.fields import check_env as _check_env
from workbench.wire.fields import check_session as _check_session
from workbench.wire.fields import no_bool as _no_bool
from workbench.wire.models import RequestModel, WireModel

#: The statuses of a context (the `ContextStatus` schema).
CONTEXT_STATUSES = ("starting", "ready", "busy", "dead")
#: The languages a context can run.
CONTEXT_LANGUAGES = ("python", "node")


class ContextRequest(RequestModel):
    """`POST /v1/contexts`."""

    language: str = Field(min_length=1, max_length=64)
    """The interpreter: `python`, or `node` where the image has it."""
    image: ImageName = "host"
    """The image it runs in, contained and limited like any execution of that image."""
    session_id: SessionId = "default"
    """The session: the interpreter's working directory is its workspace."""
    env: Env = Field(default_factory=dict)
    """Variables over the image's, for the interpreter's whole life."""
    idle_timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """An idle context (no execution running or queued) for this long is killed (`dead`)."""

    @field_validator("idle_timeout_ms", mode="before")
    @classmethod
    def _integer(cls, value: object) -> object:
        return _no_bool(value)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_env(value)

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

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in CONTEXT_LANGUAGES:
            raise ValueError(f"a context runs {', '.join(CONTEXT_LANGUAGES)}, not {value!r}")
        return value


class Context(WireModel):
    """A code context."""

    context_id: str
    language: str
    image: str
    session_id: str
    status: str
    """`starting`, `ready` (idle), `busy` (running an execution) or `dead` (its interpreter is gone)."""
    created_at: Timestamp
    last_used_at: Timestamp
    """When an execution of it last ended (its creation before the first)."""
    executions: int
    """How many executions it has run."""
    idle_timeout_ms: int | None = None
    reason: str | None = None
    """Why it is `dead` (null otherwise)."""


class ContextList(WireModel):
    """`GET /v1/contexts`: the principal's contexts, oldest first."""

    contexts: list[Context]
