"""The contract of browsers (API.md v2, "Browsers"): login, stream tokens, the changes feed."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from workbench.wire.models import Execution, Progress, RequestModel, Timestamp, WireModel

ChangeType = Literal["created", "status", "progress", "terminal"]


class LoginRequest(RequestModel):
    """`POST /v1/login`: a bearer token, or a one-time code from `POST /v1/login/links`."""

    token: str | None = Field(default=None, min_length=1, max_length=4096)
    """A bearer token; the session gets its principal and scopes."""
    code: str | None = Field(default=None, min_length=1, max_length=256)
    """A one-time login code (`workbench ui`), spent by this login."""

    @model_validator(mode="after")
    def _one(self) -> LoginRequest:
        if (self.token is None) == (self.code is None):
            raise ValueError("give exactly one of token and code")
        return self


class Login(WireModel):
    """A session: who it is, what it may do, its CSRF value, when it ends."""

    principal: str
    scopes: list[str]
    csrf_token: str
    """Send as `X-Workbench-CSRF` with every change made with the session cookie."""
    expires_at: Timestamp


class LoginLink(WireModel):
    """A one-time login code: `/#login=CODE` opens the dashboard logged in."""

    code: str
    expires_at: Timestamp


class StreamToken(WireModel):
    """Opens one execution's stream (`?streamToken=`) for 10 minutes."""

    stream_token: str
    expires_at: Timestamp


class Change(WireModel):
    """One event of `GET /v1/events/stream`: an execution as it is after its latest change."""

    change_id: int
    change: ChangeType
    execution: Execution
    progress: Progress | None = None
    """The execution's latest progress: the same as `execution.progress`."""
