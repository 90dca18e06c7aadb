"""The sandbox's errors.

::

    SandboxError                 anything the sandbox reports
    ├── SpawnError               an execution could not start; nothing of it was left behind
    │   └── ContainmentUnavailable   the requested containment does not work on this machine
    ├── UnknownExecution         no execution of that name is held by the shim
    ├── NotEmpty                 release() of a tree that still has live processes
    ├── InputClosed              input to a tree whose stdin is not open (any more)
    ├── InputFull                input beyond what the shim buffers for a tree that does not read
    ├── ShimRefused              the shim would not serve this client (busy, protocol version)
    └── SupervisorLost           the connection to the shim broke or was closed

Each class's docstring is its default message.
"""

from __future__ import annotations


class SandboxError(Exception):
    """The sandbox failed."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (type(self).__doc__ or "").strip())

    @property
    def message(self) -> str:
        """The human-readable message."""
        return str(self.args[0])


class SpawnError(SandboxError):
    """The execution could not be started."""


class ContainmentUnavailable(SpawnError):
    """The requested containment is not available on this machine."""


class NotReady(SpawnError):
    """The pre-started leader has not finished starting: it cannot be claimed yet."""


class UnknownExecution(SandboxError):
    """No execution of that name is known to the shim."""


class NotEmpty(SandboxError):
    """The execution's process tree still has live processes."""


class InputClosed(SandboxError):
    """The execution's stdin is not open: never opened, closed by an end of file, or ended."""


class InputFull(SandboxError):
    """The execution has not read the input already sent; nothing of this one was taken."""


class ShimRefused(SandboxError):
    """The shim refused this connection."""


class SupervisorLost(SandboxError):
    """The connection to the shim was lost; its executions may still be running."""


#: Wire names of the errors the shim reports, both ways.
ERROR_TYPES: dict[str, type[SandboxError]] = {
    "spawn": SpawnError,
    "containment_unavailable": ContainmentUnavailable,
    "not_ready": NotReady,
    "unknown_execution": UnknownExecution,
    "not_empty": NotEmpty,
    "input_closed": InputClosed,
    "input_full": InputFull,
    "refused": ShimRefused,
    "error": SandboxError,
}


def error_type_name(error: SandboxError) -> str:
    """The wire name of `error`'s class (the most specific one that has a name)."""
    for name, cls in ERROR_TYPES.items():
        if type(error) is cls:
            return name
    return "error"
