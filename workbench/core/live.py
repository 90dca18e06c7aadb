"""What the executor and the supervisor tasks share about live executions: their in-memory side
(`Live`), why one stops, how it ended, the concurrency slots, and the context a run works in.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import itertools
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import trio

import sandbox
from workbench.core.display import Displays
from workbench.core.follow import Inotify
from workbench.core.images import Image
from workbench.core.journal import Journal
from workbench.core.records import event_builder
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow, Watch
from workbench.core.warm import WarmPool
from workbench.wire.errors import Unavailable
from workbench.wire.status import ExecutionStatus as S

if TYPE_CHECKING:
    from workbench.core.capture import Capture

log = logging.getLogger("workbench.core.live")

#: What the journal says of an execution a restarted daemon picked up while it ran...
ADOPTED = "adopted after a daemon restart"
#: ... and of one that ended while no daemon was there.
ENDED_MEANWHILE = "finished while the daemon was down; recorded after its restart"


class Stop(enum.Enum):
    """Why a running execution is being stopped."""

    EXITED = "exited"
    CANCEL = "cancel"
    SHUTDOWN = "shutdown"
    TIMEOUT = "timeout"
    IDLE = "idle"
    #: A service that was not ready within its `readyTimeoutMs`.
    NOT_READY = "not_ready"
    #: Its `running` was refused: another node took the claim while this one was cut off.
    CLAIM_LOST = "claim_lost"


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
    #: The supervisor's name of the tree once it is spawned or adopted (for signals).
    child: str | None = None
    #: The caps of `Slots` it counts against (its principal's, its batch's).
    keys: tuple[str, ...] = ()
    #: Whether it takes one of the daemon's slots besides its keys' (a cell of a code context
    #: takes only its principal's).
    daemon_slot: bool = True
    #: Its end is being committed (`finish`): nothing of its tree runs any more.
    ending: bool = False
    #: A `failFast` batch's: why it stopped its items, once one of them ended without completing.
    fail_fast: str | None = None
    #: A batch's, once it stopped its items: why, and their grace. An item submitted after that
    #: (recovery submits a batch before its items) is stopped so at once.
    items_stopped: tuple[str, int] | None = None
    #: What follows its output into the journal, while it runs (an input journals through it).
    capture: Capture | None = None
    #: An input found that nothing of its tree reads its stdin any more (not an end of file).
    stdin_unread: bool = False

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
    """The executions waiting to run, in order, and the concurrency slots they take.

    Besides the daemon's `capacity`, an execution may be bound by caps of its own keys (its
    principal's `maxConcurrent`, its batch's `concurrency`): one that would pass a cap waits,
    and the next one that fits goes first. Otherwise first come, first served. One that takes
    no slot of the daemon's (`Live.daemon_slot` false: a cell of a code context) waits for its
    keys' caps alone. One may be counted as waiting before it asks (`park`): a cell waiting for
    its context's turn is one of its principal's waiting executions.

    The waiting are kept in groups of those that fit or not alike (the same keys, and taking a
    daemon's slot or not), each in request order: the next to go is the earliest head of a
    group that fits, so a grant looks at the groups' heads, not at every one waiting (a batch
    of 1000 behind its `concurrency` made each request and each release a walk of all 1000).
    """

    def __init__(self, capacity: int) -> None:
        self.free = capacity
        #: The waiting, by `_group`, each group in request order.
        self._groups: dict[tuple[tuple[str, ...], bool], collections.deque[Live]] = {}
        #: The waiting's request order.
        self._turn: dict[Live, int] = {}
        self._turns = itertools.count()
        #: Counted as waiting under their keys, not asking yet (`park`).
        self.parked: set[Live] = set()
        self.caps: dict[str, int] = {}
        self.used: collections.Counter[str] = collections.Counter()
        self.queued_by: collections.Counter[str] = collections.Counter()
        #: How many of the waiting need no slot of the daemon's.
        self.keyed_only = 0
        #: Bumped whenever a slot is given back (a node of a shared store then claims more).
        self.freed = Watch()
        #: Whether a waiting execution is held back for now, in its place (`Removals.holds`), and
        #: whether any may be (`Removals.active`).
        self.held: Callable[[ExecutionRow], bool] = _never
        self.holding: Callable[[], bool] = bool

    def set_cap(self, key: str, cap: int) -> None:
        """At most `cap` executions holding `key` run at once."""
        self.caps[key] = cap
        self._grant()

    def forget_cap(self, key: str) -> None:
        self.caps.pop(key, None)

    def park(self, live: Live) -> None:
        """Count `live` as waiting under its keys before it asks for its slot (`request`)."""
        self.parked.add(live)
        for key in live.keys:
            self.queued_by[key] += 1

    def request(self, live: Live) -> None:
        if live in self.parked:
            self.parked.discard(live)  # counted already
        else:
            for key in live.keys:
                self.queued_by[key] += 1
        self._turn[live] = next(self._turns)
        self._groups.setdefault(_group(live), collections.deque()).append(live)
        self.keyed_only += not live.daemon_slot
        self._grant()

    def withdraw(self, live: Live) -> None:
        """Give up a request (cancelled or timed out while queued), or the slot it was granted."""
        if live in self.parked:
            self.parked.discard(live)
            self._unqueue(live)
        elif live in self._turn:
            self._leave(live)
            self._unqueue(live)
        elif live.granted.is_set():
            self.release(live)

    def take(self, live: Live) -> None:
        """Take a slot without queueing (an adopted execution is already running)."""
        self.free -= live.daemon_slot
        for key in live.keys:
            self.used[key] += 1

    def release(self, live: Live) -> None:
        self.free += live.daemon_slot
        for key in live.keys:
            self.used[key] -= 1
        self._grant()
        self.freed.bump()

    def room(self, keys: tuple[str, ...], *, daemon_slot: bool = True) -> int:
        """How many more executions holding `keys` could start now (`daemon_slot`: each taking
        one of the daemon's slots too)."""
        room = self.free if daemon_slot else sys.maxsize
        for key in keys:
            cap = self.caps.get(key)
            if cap is not None:
                room = min(room, cap - self.used[key])
        return max(0, room)

    def _fits(self, live: Live) -> bool:
        if live.daemon_slot and self.free <= 0:
            return False
        return all(self.used[k] < self.caps[k] for k in live.keys if k in self.caps)

    def _unqueue(self, live: Live) -> None:
        for key in live.keys:
            self.queued_by[key] -= 1

    def _leave(self, live: Live) -> None:
        """Take `live` out of the waiting."""
        group = _group(live)
        waiting = self._groups[group]
        if waiting[0] is live:
            waiting.popleft()
        else:
            waiting.remove(live)
        if not waiting:
            del self._groups[group]
        del self._turn[live]
        self.keyed_only -= not live.daemon_slot

    def _grant(self) -> None:
        """Grant what fits, in request order: the earliest that fits first, and so on. A grant
        only takes room, so one that did not fit does not fit later in the same pass."""
        while self._turn and (self.free > 0 or self.keyed_only):
            live = self._next_held() if self.holding() else self._next()
            if live is None:
                return
            self._leave(live)
            self._unqueue(live)
            self.free -= live.daemon_slot
            for key in live.keys:
                self.used[key] += 1
            live.granted.set()
            live.kick.set()

    def _next(self) -> Live | None:
        """The earliest waiting that fits: the earliest of the groups' heads that fit (the others
        of a group fit only if its head does)."""
        best: Live | None = None
        for waiting in self._groups.values():
            head = waiting[0]
            if (best is None or self._turn[head] < self._turn[best]) and self._fits(head):
                best = head
        return best

    def _next_held(self) -> Live | None:
        """`_next` while some may be held back (`held`): a held one lets those after it go."""
        for live in sorted(self._turn, key=self._turn.__getitem__):
            if self._fits(live) and not self.held(live.row):
                return live
        return None

    def regrant(self) -> None:
        """What `held` held back may run now: grant what fits, in order."""
        self._grant()

    @property
    def queued(self) -> int:
        """How many executions wait: for a slot, or counted before they ask (`park`)."""
        return len(self._turn) + len(self.parked)

    @property
    def queued_for_daemon(self) -> int:
        """How many wait for one of the daemon's slots (not those held back for now: `held`)."""
        return len(self._turn) - self.keyed_only - self.held_waiting()

    def held_waiting(self, key: str | None = None) -> int:
        """How many of the waiting are held back for now (`held`), of `key` alone when given: the
        slots free meanwhile are for the others."""
        if not self.holding():
            return 0
        return sum(1 for live in self._turn if (key is None or key in live.keys) and self.held(live.row))


def _group(live: Live) -> tuple[tuple[str, ...], bool]:
    """What decides whether `live` fits: its keys, and whether it takes a daemon's slot."""
    return live.keys, live.daemon_slot


#: Schedules the tidying up after an execution: (execution id, tree held by the supervisor or
#: None, the files to keep). Runs after the waiters are answered; shutdown waits for it.
Tidy = Callable[[str, "str | None", "set[str]"], None]


def _nowhere(seconds: float) -> None:
    return None


@dataclass(eq=False)
class Observers:
    """Where the supervisor tasks report latencies (`GET /metrics` sets them; by default nowhere)."""

    #: Seconds from a slot being granted until the tree runs.
    spawn: Callable[[float], None] = _nowhere


def _never(row: ExecutionRow) -> bool:
    return False


class Removals:
    """The sessions being removed (`DELETE /v1/sessions/...`), by workspace. What starts in one
    (an execution, a code context) waits until its workspace is gone, then makes it again, empty:
    nothing starts in a workspace while it is being removed. An execution waits in the queue, in
    its place and counted (`Slots.held`), and is granted its slot once the removal is over."""

    def __init__(
        self,
        workspace_of: Callable[[ExecutionRow], Path] | None = None,
        over: Callable[[], None] | None = None,
    ) -> None:
        """`workspace_of`: an execution's workspace; `over`: called when a removal ends."""
        self._removing: dict[Path, trio.Event] = {}
        self._workspace_of = workspace_of
        self._over = over

    def active(self) -> bool:
        """Whether a removal is under way."""
        return bool(self._removing)

    def holds(self, row: ExecutionRow) -> bool:
        """Whether an execution of `row` would wait for its session's removal before it runs."""
        if not self._removing or self._workspace_of is None:
            return False
        return self._workspace_of(row) in self._removing

    def under_way(self, workspace: Path) -> trio.Event | None:
        """The end of the removal of `workspace` under way, if one is."""
        return self._removing.get(workspace)

    @contextlib.contextmanager
    def removing(self, workspace: Path) -> Iterator[None]:
        """`workspace` is being removed while the block runs."""
        self._removing[workspace] = done = trio.Event()
        try:
            yield
        finally:
            del self._removing[workspace]
            done.set()
            if self._over is not None:
                self._over()

    async def over(self, workspace: Path) -> None:
        """Wait while `workspace` is being removed."""
        done = self._removing.get(workspace) if self._removing else None
        if done is not None:
            await done.wait()


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
    #: Pre-started interpreters for stateless python code (`warm`).
    warm: WarmPool
    #: Told that an execution ends with a status, before its slot goes back (`batches.item_ended`:
    #: a `failFast` batch stops its other items there).
    item_ended: Callable[[Live, S], None]
    #: The sessions being removed: what starts in one waits (shared with `sessions.Workspaces`).
    removals: Removals
    observe: Observers = field(default_factory=Observers)


def adoption_note(live: Live, lives_on: bool = False) -> str:
    """What the journal says of a tree picked up after a restart (`lives_on`: a service whose
    leader ended while its tree goes on)."""
    if live.adopted_exit is not None and not lives_on:
        return ENDED_MEANWHILE
    if not live.adopted_known:
        return f"{ADOPTED} (its supervisor had died: the exit status will not be known)"
    return ADOPTED


async def journal_adoption(journal: Journal, execution_id: str, message: str) -> None:
    """The status event that says an execution was picked up after a restart (every adopted
    execution's, whatever runs it)."""
    note = [("status", event_builder("status", message=message))]
    try:
        await journal.append(execution_id, note, retry=False)
    except Unavailable as exc:
        # A full disk must not keep the daemon from starting: the run is adopted all the same.
        log.warning("execution %s: its adoption is not journaled: %s", execution_id, exc)
