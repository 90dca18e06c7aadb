"""The journal: the only writer of execution status and events.

`create()` writes a new execution with its first status event; `transition()` the guarded
status update and its event in one transaction; `append()` adds output, progress and artifact
events (the store group-commits them). After each commit the store wakes the execution's
watchers (`watch()`), so waits and streams never poll the store on a timer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.records import event_builder, item_event
from workbench.core.store import ArtifactRow, EventsRead, ExecutionRow, Found, Pending, Store, Watch
from workbench.core.store.base import ExitBody
from workbench.core.store.rows import EventBuilder
from workbench.wire.status import ExecutionStatus, sources_of


class Journal:
    """Status transitions and events of executions, durable before anyone sees them."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def exits_watch(self) -> Watch:
        """Woken after every terminal transition and whenever an exit's lease changes."""
        return self._store.watches.exits

    def watch(self, execution_id: str) -> contextlib.AbstractContextManager[Watch]:
        """Register interest in an execution's commits for the duration of the block."""
        return self._store.watches.watch(execution_id)

    async def create(self, row: ExecutionRow, message: str | None = None) -> tuple[ExecutionRow, bool]:
        """Accept an execution: its row and first status event (saying `message`), or the row its
        key already made."""
        first = event_builder("status", timestamp=row.created_at, message=message)
        return await self._store.create_execution(row, first)

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
    ) -> int | None:
        """Move an execution to `target` if the transition table allows it from its current status.

        The guarded UPDATE, the status event (and the exit of a detached execution, made by
        `exit_body`) commit together. Returns the event's sequence, or None when the execution
        was not in a status from which `target` may be reached: then nothing at all was written
        (terminal is final).
        """
        pending = self.begin_transition(
            execution_id,
            target,
            fields=fields,
            message=message,
            exit_code=exit_code,
            signal=signal,
            error=error,
            exit_body=exit_body,
        )
        return await pending.result()

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
    ) -> Pending[int | None]:
        """`transition`, queued now and awaited later: later writes commit after it."""
        build = event_builder("status", message=message, exit_code=exit_code, signal=signal, error=error)
        return self._store.begin_transition(
            execution_id,
            target,
            sources_of(target),
            dict(fields or {}),
            build,
            exit_body=exit_body,
            item_event=item_event,
        )

    async def append(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any] | None = None,
        *,
        artifacts: Sequence[ArtifactRow] = (),
        created_at: int = 0,
    ) -> int | None:
        """Append events to a live execution (and update `fields`, save `artifacts`) in one transaction.

        Returns the last sequence, or None if the execution is already terminal (then nothing
        is written) or no events were given.
        """
        if not events and not fields:
            return None
        return await self._store.append_events(
            execution_id, events, dict(fields or {}), artifacts=artifacts, created_at=created_at
        )
