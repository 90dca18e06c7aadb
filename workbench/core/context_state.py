"""What the daemon holds of one code context (`workbench.core.contexts` holds them all): its
kept description (`ContextInfo`, the content of its `context.json`), its channel, whose turn it
is, the driver's replies, and the events its executions wait on."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

from workbench.core.context_link import Link
from workbench.core.live import RunContext
from workbench.core.records import format_time
from workbench.wire.contexts import Context as ContextRecord


class Turn(Protocol):
    """An execution waiting for (or having) its context's turn."""

    turn: trio.Event


class Holder(Protocol):
    """What an execution of a context asks of the daemon's contexts."""

    ex: RunContext

    async def kill(self, context: Context, reason: str) -> None: ...
    async def interrupt(self, context: Context, execution_id: str) -> None: ...
    def used(self, context: Context) -> None: ...


@dataclass
class ContextInfo:
    """What is kept of a context in its `context.json`."""

    id: str
    principal: str
    language: str
    image: str
    session_id: str
    cwd: str
    env: dict[str, str]
    idle_timeout_ms: int | None
    created_at: int
    last_used_at: int
    executions: int = 0
    dead: bool = False
    reason: str | None = None
    child: dict[str, Any] | None = None


@dataclass(eq=False)
class Context:
    """A context as the daemon holds it."""

    info: ContextInfo
    directory: Path
    link: Link | None = None
    #: The execution that has its turn, and those waiting for theirs, in order.
    running: Turn | None = None
    turns: collections.deque[Turn] = field(default_factory=collections.deque)
    #: Replies of the driver by execution id.
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What the driver said when (re)connected: the cell running, the last reply.
    hello: dict[str, Any] | None = None
    ready: trio.Event = field(default_factory=trio.Event)
    dead: trio.Event = field(default_factory=trio.Event)
    changed: trio.Event = field(default_factory=trio.Event)
    #: Why it is being killed (set before the kill, so that its end says why).
    killing: str | None = None
    #: Its counts changed and a save of its `context.json` is due (`Contexts.used`).
    saving: bool = False

    @property
    def socket(self) -> Path:
        return self.directory / "chan" / "sock"

    @property
    def status(self) -> str:
        if self.info.dead:
            return "dead"
        if not self.ready.is_set():
            return "starting"
        return "busy" if self.running is not None else "ready"

    def handed(self, execution_id: str) -> bool:
        """Whether its driver was given that execution: it runs it, or has its reply."""
        return (self.hello or {}).get("busy") == execution_id or execution_id in self.replies

    def notify(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def record(self) -> ContextRecord:
        info = self.info
        return ContextRecord(
            context_id=info.id,
            language=info.language,
            image=info.image,
            session_id=info.session_id,
            status=self.status,
            created_at=format_time(info.created_at) or "",
            last_used_at=format_time(info.last_used_at) or "",
            executions=info.executions,
            idle_timeout_ms=info.idle_timeout_ms,
            reason=info.reason,
        )

    def grant(self) -> None:
        """Give the turn to the next execution if none has it."""
        if self.running is None and self.turns and not self.info.dead:
            self.running = self.turns.popleft()
            self.running.turn.set()
        self.notify()

    def release(self, run: Turn) -> None:
        if self.running is run:
            self.running = None
        else:
            try:
                self.turns.remove(run)
            except ValueError:
                pass
        self.grant()
