"""What the executor and the supervisor tasks share about live executions: their in-memory side
(`Live`), why one stops, how it ended, the concurrency slots, and the context a run works in.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

import sandbox
from workbench.core.display import Displays
from workbench.core.follow import Inotify
from workbench.core.images import Image
from workbench.core.journal import Journal
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow
from workbench.wire.status import ExecutionStatus as S


class Stop(enum.Enum):
    """Why a running execution is being stopped."""

    EXITED = "exited"
    CANCEL = "cancel"
    SHUTDOWN = "shutdown"
    TIMEOUT = "timeout"
    IDLE = "idle"
    #: A service that was not ready within its `readyTimeoutMs`.
    NOT_READY = "not_ready"


@dataclass(eq=False)
class Live:
    """The in-memory side of a live execution, shared by its supervisor and the request handlers."""

    id: str
    row: ExecutionRow
    status: S
    #: The first stop asked for (cancel or shutdown) with its reason and grace.
    stop: Stop | None = None
    reason: str | None = None
    grace_ms: int = 0
    kick: trio.Event = field(default_factory=trio.Event)
    granted: trio.Event = field(default_factory=trio.Event)
    #: Set once a cancel is recorded (`cancel_requested`/`cancelled`) or the outcome is final.
    cancel_handled: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)
    #: Recovery: the tree a restarted daemon found (and its exit status if it already ended).
    adopted: sandbox.ChildInfo | None = None
    adopted_exit: sandbox.ExitStatus | None = None
    adopted_known: bool = True
    #: Whether the sandbox supervisor holds the tree (false: it ended and nothing of it is left).
    held: bool = True

    def request_stop(self, why: Stop, reason: str | None, grace_ms: int) -> None:
        if self.stop is None:
            self.stop, self.reason, self.grace_ms = why, reason, grace_ms
        self.kick.set()


@dataclass
class Outcome:
    status: S
    exit_code: int | None = None
    signal: str | None = None
    error: dict[str, str] | None = None


class Slots:
    """A FIFO of executions waiting to run, and the number of free concurrency slots."""

    def __init__(self, capacity: int) -> None:
        self.free = capacity
        self.waiting: collections.deque[Live] = collections.deque()

    def request(self, live: Live) -> None:
        self.waiting.append(live)
        self._grant()

    def withdraw(self, live: Live) -> None:
        """Give up a request (cancelled or timed out while queued), or the slot it was granted."""
        try:
            self.waiting.remove(live)
        except ValueError:
            if live.granted.is_set():
                self.release()

    def take(self) -> None:
        """Take a slot without queueing (an adopted execution is already running)."""
        self.free -= 1

    def release(self) -> None:
        self.free += 1
        self._grant()

    def _grant(self) -> None:
        while self.free > 0 and self.waiting:
            live = self.waiting.popleft()
            self.free -= 1
            live.granted.set()
            live.kick.set()

    @property
    def queued(self) -> int:
        return len(self.waiting)


#: Schedules the tidying up after an execution: (execution id, tree held by the supervisor or
#: None, the files to keep). Runs after the waiters are answered; shutdown waits for it.
Tidy = Callable[[str, "str | None", "set[str]"], None]


@dataclass(frozen=True, eq=False)
class RunContext:
    """What a supervisor task needs of the daemon (the executor provides it)."""

    settings: Settings
    journal: Journal
    supervisor: sandbox.Supervisor
    inotify: Inotify
    images: dict[str, Image]
    containment: sandbox.Containment
    slots: Slots
    displays: Displays
    tidy: Tidy
