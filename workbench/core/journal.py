"""The journal: the only writer of execution status and events.

`create()` writes a new execution with its first status event; `transition()` the guarded
status update and its event in one transaction; `append()` adds output, progress and artifact
events (the store group-commits them). After each commit the store wakes the execution's
watchers (`watch()`), so waits and streams never poll the store on a timer.

When the store cannot commit (a full disk), what a running execution writes is not dropped: an
append is tried again, with the same events, until it commits (its offsets are only advanced
with it, so nothing is lost or doubled), and so is a terminal transition, so the outcome is kept.
A step on the way (`running`, `cancel_requested`) that could not be committed is not waited for:
it is written again, before the terminal transition, if that one finds it missing. Once the
daemon stops (`stopping`), these give up: the next start recovers the execution.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import trio

from workbench.core.records import event_builder, item_event
from workbench.core.store import ArtifactRow, EventsRead, ExecutionRow, Found, Pending, Store, Watch
from workbench.core.store.base import ExitBody
from workbench.core.store.rows import EventBuilder
from workbench.core.waiting import first_of
from workbench.wire.errors import Unavailable
from workbench.wire.status import ExecutionStatus, sources_of

log = logging.getLogger("workbench.core.journal")

T = TypeVar("T")

#: The wait before a write the store could not commit is tried again, doubling up to the most;
#: a change of the store's health (room again) cuts it short.
_RETRY_FIRST_S = 0.1
_RETRY_MOST_S = 2.0


@dataclass(frozen=True)
class _Step:
    """A non-terminal transition as it was asked for, to be asked again if it was not committed."""

    target: ExecutionStatus
    fields: dict[str, Any]
    event: EventBuilder
    owner: str | None = None


def _nowhere(seconds: float) -> None:
    return None


class Journal:
    """Status transitions and events of executions, durable before anyone sees them."""

    def __init__(self, store: Store) -> None:
        self._store = store
        #: Set when the daemon stops: writes waiting for the store to commit again give up.
        self.stopping = trio.Event()
        #: The non-terminal transitions asked for each live execution, in order.
        self._steps: dict[str, list[_Step]] = {}
        #: Told the seconds each transition or append took to commit (`GET /metrics`).
        self.observe_commit: Callable[[float], None] = _nowhere

    @property
    def exits_watch(self) -> Watch:
        """Woken after every terminal transition and whenever an exit's lease changes."""
        return self._store.watches.exits

    def watch(self, execution_id: str, *, follower: bool = True) -> contextlib.AbstractContextManager[Watch]:
        """Register interest in an execution's commits for the duration of the block (`follower`:
        a client's wait or stream, as `Watches.watch` counts them)."""
        return self._store.watches.watch(execution_id, follower=follower)

    async def create(self, row: ExecutionRow, message: str | None = None) -> tuple[ExecutionRow, bool]:
        """Accept an execution: its row and first status event (saying `message`), or the row its
        key already made."""
        first = event_builder("status", timestamp=row.created_at, message=message)
        return await self._timed(self._store.create_execution(row, first))

    async def create_batch(
        self, batch: ExecutionRow, items: Sequence[ExecutionRow]
    ) -> tuple[ExecutionRow, bool]:
        """Accept a batch: its row, its items' rows, their first events and the batch's `item`
        events, all in one transaction; or the row its key already made."""
        first = event_builder("status", timestamp=batch.created_at)
        return await self._store.create_batch(batch, items, first, item_event)

    async def found(self, execution_id: str) -> Found | None:
        """The execution's record as committed (a batch's with its items)."""
        return await self._store.get_execution(execution_id)

    async def read(self, execution_id: str, after: int, limit: int) -> EventsRead:
        """Committed events after `after`, with the execution as of the same snapshot."""
        return await self._store.read_events(execution_id, after, limit)

    async def transition(
        self,
        execution_id: str,
        target: ExecutionStatus,
        *,
        fields: Mapping[str, Any] | None = None,
        message: str | None = None,
        exit_code: int | None = None,
        signal: str | None = None,
        error: dict[str, str] | None = None,
        exit_body: ExitBody | None = None,
        owner: str | None = None,
        before: Sequence[tuple[str, EventBuilder]] = (),
    ) -> int | None:
        """Move an execution to `target` if the transition table allows it from its current status
        (and, with `owner`, if it is that node's: see `Store.begin_transition`), after `before`'s
        events, in the same transaction.

        The guarded UPDATE, the status event (and the exit of a detached execution, made by
        `exit_body`) commit together. Returns the event's sequence, or None when the execution
        was not in a status from which `target` may be reached: then nothing at all was written
        (terminal is final).

        A terminal transition is tried until it commits (call it under a cancel shield); None
        once the daemon stops first. A non-terminal one the store cannot commit returns None: it
        is written again before the terminal one, if that finds it missing.
        """
        pending = partial(
            self.begin_transition,
            execution_id,
            target,
            fields=fields,
            message=message,
            exit_code=exit_code,
            signal=signal,
            error=error,
            exit_body=exit_body,
            owner=owner,
            before=before,
        )
        if not target.terminal:
            try:
                return await self._timed(pending().result())
            except Unavailable as exc:
                log.warning("execution %s: %s not recorded yet: %s", execution_id, target.value, exc)
                return None
        what = f"execution {execution_id}: the outcome ({target.value})"
        try:
            sequence = await self._until_committed(lambda: self._timed(pending().result()), what)
            if sequence is None and self._steps.get(execution_id):
                # Refused: a step before it may be missing (not committed then). Each is guarded,
                # so writing them again writes only the missing ones.
                for step in self._steps[execution_id]:
                    await self._until_committed(partial(self._replay, execution_id, step), what)
                sequence = await self._until_committed(lambda: pending().result(), what)
        except Unavailable:
            return None  # the daemon stops: the next start recovers it
        self._steps.pop(execution_id, None)
        return sequence

    async def _timed(self, write: Awaitable[T]) -> T:
        began = time.perf_counter()
        result = await write
        self.observe_commit(time.perf_counter() - began)
        return result

    async def _replay(self, execution_id: str, step: _Step) -> int | None:
        sources = sources_of(step.target)
        return await self._store.begin_transition(
            execution_id, step.target, sources, step.fields, step.event, owner=step.owner
        ).result()

    async def _until_committed(self, write: Callable[[], Awaitable[T]], what: str) -> T:
        """`write()` until the store commits it; raises Unavailable once the daemon stops first."""
        delay = _RETRY_FIRST_S
        while True:
            try:
                return await write()
            except Unavailable as exc:
                if self.stopping.is_set():
                    log.error("%s: not recorded, the daemon stops (%s)", what, exc)
                    raise
                if delay == _RETRY_FIRST_S:
                    log.warning("%s: not recorded yet, trying again until it is: %s", what, exc)
            health = self._store.health
            with trio.move_on_after(delay):
                await first_of(health.wait_changed, self.stopping.wait)
            delay = min(delay * 2, _RETRY_MOST_S)

    def begin_transition(
        self,
        execution_id: str,
        target: ExecutionStatus,
        *,
        fields: Mapping[str, Any] | None = None,
        message: str | None = None,
        exit_code: int | None = None,
        signal: str | None = None,
        error: dict[str, str] | None = None,
        exit_body: ExitBody | None = None,
        lazy: bool = False,
        owner: str | None = None,
        before: Sequence[tuple[str, EventBuilder]] = (),
    ) -> Pending[int | None]:
        """`transition`, queued now and awaited later: later writes commit after it.

        `lazy`: not awaited at once, so its commit may wait a few ms to share the next one's.
        `owner`: refused unless the execution is that node's; a refusal disowns it (see
        `Store.begin_transition`).
        """
        build = event_builder("status", message=message, exit_code=exit_code, signal=signal, error=error)
        values = dict(fields or {})
        if not target.terminal:
            self._steps.setdefault(execution_id, []).append(_Step(target, values, build, owner))
        return self._store.begin_transition(
            execution_id,
            target,
            sources_of(target),
            dict(fields or {}),
            build,
            exit_body=exit_body,
            item_event=item_event,
            lazy=lazy,
            owner=owner,
            before=before,
        )

    async def append(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any] | None = None,
        *,
        artifacts: Sequence[ArtifactRow] = (),
        created_at: int = 0,
        retry: bool = True,
    ) -> int | None:
        """Append events to a live execution (and update `fields`, save `artifacts`) in one transaction.

        Returns the last sequence, or None if the execution is already terminal (then nothing
        is written) or no events were given. Tried until the store commits it (None if the
        daemon stops first); with `retry=False`, once: StorageFull or Unavailable if it fails.
        """
        if not events and not fields:
            return None
        write = partial(
            self._store.append_events,
            execution_id,
            events,
            dict(fields or {}),
            artifacts=artifacts,
            created_at=created_at,
        )
        if not retry:
            return await self._timed(write())
        try:
            what = f"execution {execution_id}: its events"
            return await self._until_committed(lambda: self._timed(write()), what)
        except Unavailable:
            return None  # the daemon stops: the next start resumes from the last committed offsets

    def forget(self, execution_id: str) -> None:
        """Drop what is kept for an execution this node will write no more (its claim was lost)."""
        self._steps.pop(execution_id, None)
