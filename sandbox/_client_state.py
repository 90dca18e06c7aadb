"""What the shim's client (`sandbox._client`) keeps of each execution and each request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from ._errors import ERROR_TYPES, SandboxError
from ._model import ExitStatus, KnownChild


class Child:
    """What the client knows of one execution, with events for the tasks waiting on it."""

    def __init__(self, known: KnownChild) -> None:
        self.info = known.info
        self.status: ExitStatus | None = None
        self.empty = False
        self.exited = trio.Event()
        self.emptied = trio.Event()
        #: Called once `exited` is set (`Supervisor.when_exited`).
        self.on_exit: list[Callable[[], None]] = []
        # Known only here: its shim died with it finished (or it was gone when taken back), so
        # no shim holds it and releasing it is just forgetting it.
        self.orphaned = False
        self.update(known.status, known.empty)

    def update(self, status: ExitStatus | None, empty: bool) -> None:
        if status is not None:
            self.status = status
            self.set_exited()
        if empty and self.status is not None:
            self.empty = True
            self.emptied.set()

    def set_exited(self) -> None:
        """Set `exited` (its exit is known, or the shim was lost) and call `on_exit`."""
        self.exited.set()
        callbacks, self.on_exit = self.on_exit, []
        for callback in callbacks:
            callback()


class Reply:
    def __init__(self) -> None:
        self.done = trio.Event()
        self.message: dict[str, Any] | None = None


def error(data: Any) -> SandboxError:
    if not isinstance(data, dict):
        return SandboxError(f"malformed error from the shim: {data!r}")
    cls = ERROR_TYPES.get(str(data.get("type")), SandboxError)
    return cls(str(data.get("message")))
