"""The bodies of the routes that act on one execution: wait, cancel, signal, input, resize.
`models` re-exports every name."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from workbench.wire.base import RequestModel
from workbench.wire.fields import MAX_CANCEL_REASON, MAX_WAIT_TIMEOUT_MS
from workbench.wire.fields import no_bool as _no_bool
from workbench.wire.fields import strict_bool as _strict_bool
from workbench.wire.interactive import MAX_INPUT_BYTES


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


#: The signals `POST .../signal` sends, without their `SIG` prefix.
SIGNAL_NAMES = ("HUP", "INT", "QUIT", "TERM", "USR1", "USR2", "WINCH", "CONT", "STOP", "TSTP")


class SignalRequest(RequestModel):
    """`POST .../signal`."""

    signal: str = Field(pattern=f"^({'|'.join(SIGNAL_NAMES)})$")
    """The signal for every process of the tree: HUP, INT, QUIT, TERM, USR1, USR2, WINCH, CONT, STOP
    or TSTP (`INT` is what Ctrl-C sends on a terminal)."""


class InputRequest(RequestModel):
    """`POST .../input` as JSON (raw bytes go as `application/octet-stream`, with `?eof=true`)."""

    data: str = Field(default="", max_length=MAX_INPUT_BYTES)
    """Text written to stdin as UTF-8 (at most 1048576 bytes)."""
    eof: bool = False
    """Then close stdin (on a terminal: send its end-of-file character, Ctrl-D)."""
    record: bool = True
    """false: journal only the byte count, not the bytes (a password)."""

    @field_validator("eof", "record", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        return _strict_bool(value)


class ResizeRequest(RequestModel):
    """`POST .../resize`: the terminal's new size, in character cells."""

    rows: int = Field(ge=1, le=1000)
    cols: int = Field(ge=1, le=1000)

    @field_validator("rows", "cols", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _no_bool(value)
