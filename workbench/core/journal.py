"""The journal: the only writer of execution status and events, and the wake-ups of its readers.

`transition()` writes the guarded status update and its event in one transaction; `append()`
adds output, progress and artifact events (the store group-commits them). After each commit the
execution's watchers are woken, so waits and streams never poll the store on a timer: a reader
notes `watch.version`, reads what is committed, and sleeps only if the version did not move.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from workbench.core.records import EventBuilder, event_builder
from workbench.core.store import sqlite as store
from workbench.core.store.sqlite import Pending, Store
from workbench.wire.status import ExecutionStatus, sources_of


@dataclass(eq=False)
class Watch:
    """Wake-ups of one execution. `version` grows by one per commit that touched it."""

    version: int = 0
    users: int = 0
    #: The row and artifacts of the execution's terminal transition, once it committed (while
    #: watched).
    final: tuple[dict[str, Any], list[dict[str, Any]]] | None = None
    _lot: trio.lowlevel.ParkingLot = field(default_factory=trio.lowlevel.ParkingLot)

    async def wait_changed(self, seen: int) -> None:
        """Return once `version` differs from `seen` (at once if it already does)."""
        while self.version == seen:
            await self._lot.park()

    def _bump(self) -> None:
        self.version += 1
        self._lot.unpark_all()


class Journal:
    """Status transitions and events of executions, durable before anyone sees them."""

    def __init__(self, db: Store) -> None:
        self._db = db
        self._watches: dict[str, Watch] = {}
        #: Woken after every terminal transition (which may save an exit) and whenever an exit's
        #: lease changes: the exits feed's long-polls sleep on it.
        self.exits_watch = Watch()

    @contextlib.contextmanager
    def watch(self, execution_id: str) -> Iterator[Watch]:
        """Register interest in an execution's commits for the duration of the block."""
        w = self._watches.get(execution_id)
        if w is None:
            w = self._watches[execution_id] = Watch()
        w.users += 1
        try:
            yield w
        finally:
            w.users -= 1
            if w.users == 0 and self._watches.get(execution_id) is w:
                del self._watches[execution_id]

    def notify(self, execution_id: str) -> None:
        """Wake the watchers of an execution (after a commit that touched it)."""
        w = self._watches.get(execution_id)
        if w is not None:
            w._bump()

    def notify_exits(self) -> None:
        """Wake the exits feed's long-polls (an exit's lease changed)."""
        self.exits_watch._bump()

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
        also: Callable[[sqlite3.Connection, int], None] | None = None,
    ) -> int | None:
        """Move an execution to `target` if the transition table allows it from its current status.

        The guarded UPDATE, the status event (and `also`, in the same transaction) commit together.
        Returns the event's sequence, or None when the execution was not in a status from which
        `target` may be reached: then nothing at all was written (terminal is final).
        """
        pending = self.begin_transition(
            execution_id,
            target,
            fields=fields,
            message=message,
            exit_code=exit_code,
            signal=signal,
            error=error,
            also=also,
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
        also: Callable[[sqlite3.Connection, int], None] | None = None,
    ) -> Pending[int | None]:
        """`transition`, queued now and awaited later: later writes commit after it."""
        columns: dict[str, Any] = dict(fields or {})
        build = event_builder("status", message=message, exit_code=exit_code, signal=signal, error=error)
        sources = sources_of(target)

        final: list[Any] = []

        def job(conn: sqlite3.Connection) -> int | None:
            row = store.transition(conn, execution_id, target, sources, columns, build)
            if row is None:
                return None
            sequence: int = row["last_sequence"]
            if also is not None:
                also(conn, sequence)
            if target.terminal:
                # The final record, handed to watchers: waits answer without reading it again.
                final.append((row, store.list_artifacts(conn, execution_id)))
            return sequence

        def committed(sequence: int | None) -> None:
            if sequence is not None:
                watch = self._watches.get(execution_id)
                if final and watch is not None:
                    watch.final = final[0]
                self.notify(execution_id)
                if target.terminal:
                    self.exits_watch._bump()

        return self._db.submit(job, committed)

    async def append(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any] | None = None,
        *,
        also: Callable[[sqlite3.Connection], None] | None = None,
    ) -> int | None:
        """Append events to a live execution (and update `fields` with them) in one transaction.

        `also` runs in the same transaction when the events were written. Returns the last
        sequence, or None if the execution is already terminal (then nothing is written).
        """
        columns = dict(fields or {})
        if not events:
            if columns:
                await self._db.write(lambda conn: store.update_execution(conn, execution_id, columns))
            return None

        def job(conn: sqlite3.Connection) -> int | None:
            last = store.append_events(conn, execution_id, events, columns)
            if last is not None and also is not None:
                also(conn)
            return last

        return await self._db.write(job, lambda last: self.notify(execution_id) if last is not None else None)

    async def update(self, execution_id: str, fields: Mapping[str, Any]) -> None:
        """Set non-status columns (counters, child info); wakes nobody."""
        columns = dict(fields)
        await self._db.write(lambda conn: store.update_execution(conn, execution_id, columns))
