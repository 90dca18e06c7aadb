"""The executor: owns the live executions, their supervisor tasks, the concurrency slots, the tidying.

It holds the daemon's nursery for executions (never the app's, which would block shutdown) and
schedules: each submitted execution gets one supervisor task (`runner.Run`), which owns its
execution to the end, the shielded finish included. The executor never reads a run back.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import trio

import sandbox
from workbench.core.batches import BatchRun, batch_key, item_ended, stopped_by_batch
from workbench.core.contexts import Contexts
from workbench.core.display import Displays
from workbench.core.follow import Inotify
from workbench.core.images import Image
from workbench.core.journal import Journal
from workbench.core.live import Live, Removals, RunContext, Slots, Stop
from workbench.core.principals import Principal, principal_key
from workbench.core.runner import Run
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow
from workbench.core.warm import WarmPool
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.executor")


class Executor:
    """Runs executions: `submit` a committed row, `cancel`, and `kill_all` at the end."""

    def __init__(
        self,
        *,
        settings: Settings,
        journal: Journal,
        supervisor: sandbox.Supervisor,
        inotify: Inotify,
        images: dict[str, Image],
        containment: sandbox.Containment,
        nursery: trio.Nursery,
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.supervisor = supervisor
        self.images = images
        self._nursery = nursery
        self.slots = Slots(settings.max_concurrent_executions)
        #: The sessions being removed: their executions wait in the queue meanwhile.
        self.removals = Removals(partial(_workspace_of, settings), self.slots.regrant)
        self.slots.held, self.slots.holding = self.removals.holds, self.removals.active
        self.live: dict[str, Live] = {}
        self.displays = Displays()
        self._tidying = 0
        self._tidied = trio.Event()
        self.accepting = True
        #: Pre-started python interpreters; its refill task is started once recovery is done.
        self.warm = WarmPool(supervisor, settings.layout.warm_dir, settings.warm_pool)
        self.context = RunContext(
            settings=settings,
            journal=journal,
            supervisor=supervisor,
            inotify=inotify,
            images=images,
            containment=containment,
            slots=self.slots,
            displays=self.displays,
            tidy=self._start_tidy,
            warm=self.warm,
            item_ended=partial(item_ended, self.slots, self.live),
            removals=self.removals,
        )
        #: The code contexts, whose executions are supervised here too (`submit`).
        self.contexts = Contexts(self.context, nursery, self.live)

    # -- lifecycle of one execution -----------------------------------------------------------

    def set_quotas(self, principals: list[Principal]) -> None:
        """The principals' `maxConcurrent` quotas (before anything is submitted)."""
        for principal in principals:
            if principal.max_concurrent is not None:
                self.slots.set_cap(principal.key, principal.max_concurrent)

    def submit(self, row: ExecutionRow, live: Live | None = None) -> Live:
        """Start supervising an execution whose row is committed (a batch before its items)."""
        if live is None:
            live = Live(row.id, row, row.status)
        self.live[live.id] = live
        if row.kind == "batch":
            cap = row.concurrency or self.settings.max_concurrent_executions
            # A failFast batch picked up after a restart starts no item before its supervisor has
            # read its journal: an item may have failed just before the daemon died.
            held = row.fail_fast and row.status is not S.QUEUED
            self.slots.set_cap(batch_key(row.id), 0 if held else cap)
            held_cap = cap if held else None
            self._nursery.start_soon(self._supervise_batch, live, held_cap, name=f"batch {live.id}")
            return live
        live.keys = (principal_key(row.principal),)
        if row.context_id is not None:
            self.contexts.submit(live)
            return live
        if row.batch_id is not None:
            live.keys += (batch_key(row.batch_id),)
            stopped_by_batch(self.live, live)
        if live.adopted is not None:
            # Already running: it holds a slot from now on (released when it ends).
            self.slots.take(live)
        elif live.status is S.QUEUED and live.reason is None:
            # Queue now, in submission order: tasks start in no guaranteed order.
            self.slots.request(live)
        self._nursery.start_soon(self._supervise, live, name=f"execution {live.id}")
        return live

    async def _supervise(self, live: Live) -> None:
        try:
            await Run(self.context, live).supervise()
        finally:
            self.live.pop(live.id, None)

    async def _supervise_batch(self, live: Live, held_cap: int | None) -> None:
        try:
            await BatchRun(self.journal, self.live, live, self.slots, held_cap).supervise()
        finally:
            self.live.pop(live.id, None)
            self.slots.forget_cap(batch_key(live.id))

    @property
    def backlog(self) -> int:
        """How many accepted executions wait for a slot (each queues when it is submitted)."""
        return self.slots.queued

    async def cancel(self, execution_id: str, reason: str | None, grace_ms: int) -> None:
        """Ask the supervisor to cancel; returns once the cancel is recorded or the outcome final."""
        live = self.live.get(execution_id)
        if live is None:
            return
        live.request_stop(Stop.CANCEL, reason, grace_ms)
        await live.cancel_handled.wait()

    async def signal(self, execution_id: str, number: int) -> bool:
        """Send signal `number` to every process of a running tree, or to the foreground process
        group of its terminal when it runs on one; False when none is running."""
        live = self.live.get(execution_id)
        if live is None or live.status is not S.RUNNING or live.stop is not None or live.child is None:
            return False
        try:
            await self.supervisor.signal(live.child, number, foreground=live.row.tty_json is not None)
        except sandbox.SandboxError:
            return False  # it ended meanwhile
        return True

    # -- tidying up ---------------------------------------------------------------------------

    def _start_tidy(self, execution_id: str, held: str | None, kept: set[str]) -> None:
        # Tidying up (the supervisor's cgroups, the spool files) waits for the waiters: the
        # answer to whoever waits on this execution goes out first.
        self._tidying += 1
        self._nursery.start_soon(self._tidy, execution_id, held, kept)

    async def _tidy(self, execution_id: str, held: str | None, kept: set[str]) -> None:
        try:
            await trio.lowlevel.cancel_shielded_checkpoint()
            with trio.CancelScope(shield=True):
                if held is not None:
                    try:
                        await self.supervisor.release(held)
                    except sandbox.SandboxError as exc:
                        log.warning("execution %s: release failed: %s", execution_id, exc)
                directory = self.settings.layout.execution(execution_id)
                await trio.to_thread.run_sync(directory.remove, kept)
        finally:
            self._tidying -= 1
            if not self._tidying:
                self._tidied.set()
                self._tidied = trio.Event()

    # -- shutdown -----------------------------------------------------------------------------

    async def kill_all(self, reason: str) -> None:
        """Stop every live execution (`cancelled`, with `reason`) and wait for them to finish."""
        lives = list(self.live.values())
        for live in lives:
            live.request_stop(Stop.SHUTDOWN, reason, 0)
        for live in lives:
            await live.done.wait()
        while self._tidying:
            await self._tidied.wait()


def _workspace_of(settings: Settings, row: ExecutionRow) -> Path:
    return settings.layout.workspace(row.principal, row.session_id)
