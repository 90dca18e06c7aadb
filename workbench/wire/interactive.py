"""The wire shapes of interactive executions: the start fields that keep stdin open, put the tree on
a terminal or carry a shell's state, and the bodies of `POST .../input` and `POST .../resize` (see
`docs/api.md`, "Interactive executions"). `models.StartRequest` takes the start fields from here."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

#: The most bytes one `POST .../input` carries (the shim keeps as many waiting per execution).
MAX_INPUT_BYTES = 1 << 20
#: A terminal's size when `ttySize` is not given.
DEFAULT_TTY_ROWS, DEFAULT_TTY_COLS = 24, 80

_REQUEST = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=False,
    frozen=True,
    extra="forbid",
    strict=True,
    use_attribute_docstrings=True,
    json_schema_serialization_defaults_required=True,
)


def _strict(value: Any, kind: type) -> Any:
    # JSON 1 is not true, nor "24" a number, whatever lax parsing would make of them.
    if kind is bool and not isinstance(value, bool):
        raise ValueError("must be true or false")
    if kind is int and isinstance(value, bool | str):
        raise ValueError("must be an integer")
    return value


class TtySize(BaseModel):
    """A terminal's size in character cells."""

    model_config = _REQUEST

    rows: int = Field(ge=1, le=1000)
    cols: int = Field(ge=1, le=1000)

    @field_validator("rows", "cols", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _strict(value, int)


class InteractiveFields(BaseModel):
    """The fields of a start that keep its input open after it started."""

    model_config = _REQUEST

    open_stdin: bool = False
    """Keep stdin open (`POST .../input` writes to it, `eof` closes it) instead of `stdin` text then
    end of file."""
    tty: bool = False
    """Run the tree on a pseudo-terminal: stdin, stdout and stderr are the terminal, its output is
    the one `stdout` stream, `TERM` is `xterm-256color` unless `env` says otherwise; input is
    open as with `openStdin`."""
    tty_size: TtySize | None = None
    """The terminal's size (default 24 rows, 80 columns); needs `tty`."""

    @field_validator("open_stdin", "tty", mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        return _strict(value, bool)

    @model_validator(mode="after")
    def _consistent(self) -> InteractiveFields:
        if self.tty_size is not None and not self.tty:
            raise ValueError("ttySize needs tty: true")
        if (self.open_stdin or self.tty) and getattr(self, "stdin", None) is not None:
            raise ValueError("stdin text and openStdin or tty: give one (send the text as input)")
        return self


class ShellFields(BaseModel):
    """The field of a bash start that carries a shell's state from one execution to the next."""

    model_config = _REQUEST

    persist_shell: bool = False
    """Start in the working directory and with the exported variables that the last finished
    `persistShell` execution of the same session and principal left (captured by its shell after
    the command, also when it failed; not when it was killed), and leave its own for the next."""

    @field_validator("persist_shell", mode="before")
    @classmethod
    def _boolean(cls, value: Any) -> Any:
        return _strict(value, bool)
