"""The service's reads: records, listings, the changes feed, waits, event pages and streams, and
artifacts, for a principal, with its checks (`Service` is these and the operations that act)."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path

import trio

from workbench.core import accept
from workbench.core.deletes import Deletes
from workbench.core.executor import Executor
from workbench.core.journal import Journal
from workbench.core.layout import STREAMS
from workbench.core.preview import execution_preview
from workbench.core.principals import ADMIN as ADMIN
from workbench.core.principals import Principal as Principal
from workbench.core.records import execution_from, final_record
from workbench.core.settings import Settings
from workbench.core.store import Found, ListFilter, Store
from workbench.wire.errors import (
    NotFound,
)
from workbench.wire.models import (
    EXECUTION_ID,
    EXECUTION_KINDS,
    Execution,
)
from workbench.wire.status import ExecutionStatus


@dataclass(frozen=True)
class StreamPage:
    """SSE frames of committed events, where they end, and whether more are already committed."""

    frames: str
    next_after: int
    terminal: bool
    more: bool
    #: The sequence of the `output_truncated` event, once there is one.
    truncated_at: int | None = None


@dataclass(frozen=True)
class Change:
    """One entry of the changes feed: its number, what changed, the record (whose `progress` is
    its latest progress)."""

    change_id: int
    change: str
    execution: Execution


@dataclass(frozen=True)
class EventsPage:
    """A page of events as stored JSON texts (served without re-encoding)."""

    bodies: list[str]
    next_after: int
    terminal: bool


class Reads:
    """The operations of the API that read (mixed into `Service`, which sets these)."""

    settings: Settings
    store: Store
    journal: Journal
    executor: Executor
    stopping: trio.Event
    deletes: Deletes

    async def get(self, principal: Principal, execution_id: str, kind: str | None = None) -> Execution:
        """One record; NotFound for an unknown id, a wrong kind, or another principal's execution."""
        return await self.record(await self._found(principal, execution_id, kind))

    async def record(self, found: Found) -> Execution:
        """The wire record with its preview: kept since its end, or made from its spool files now."""
        row = found.row
        if row.status.terminal:
            return final_record(found)
        directory = self.settings.layout.execution(row.id)
        return execution_from(found, await execution_preview(directory, row, final=False))

    async def _found(self, principal: Principal, execution_id: str, kind: str | None) -> Found:
        if not EXECUTION_ID.fullmatch(execution_id):
            raise NotFound(f"no execution {execution_id!r}")
        found = await self.store.get_execution(execution_id)
        if found is None:
            raise NotFound(f"no execution {execution_id}")
        row = found.row
        if not (principal.sees_all or row.principal == principal.name):
            # Exactly what an id that was never made gets: existence does not leak.
            raise NotFound(f"no execution {execution_id}")
        if kind is not None and row.kind != kind:
            raise NotFound(f"no execution {execution_id} of kind {kind}")
        return found

    async def list(
        self,
        principal: Principal,
        *,
        status: str | None,
        kind: str | None,
        session_id: str | None,
        limit: int,
        cursor: str | None,
        rerun_of: str | None = None,
        batch_id: str | None = None,
        service: bool | None = None,
        preview: bool = False,
        text: str | None = None,
    ) -> tuple[list[Execution], str | None]:
        """Newest first, `limit` per page; the cursor is the id to continue after. `rerun_of`:
        only the reruns of that execution; `batch_id`: only the items of that batch. With
        `preview`, each record carries its preview (otherwise null: a listing reads no spool files).
        `service`: only services (true) or only the others (false)."""
        if status is not None and status not in {s.value for s in ExecutionStatus}:
            raise accept.field_error(
                "status", f"must be one of {', '.join(s.value for s in ExecutionStatus)}"
            )
        if kind is not None and kind not in EXECUTION_KINDS:
            raise accept.field_error("kind", f"must be one of {', '.join(EXECUTION_KINDS)}")
        if cursor is not None and not EXECUTION_ID.fullmatch(cursor):
            raise accept.field_error("cursor", "is not a cursor this daemon handed out")
        owner = None if principal.sees_all else principal.name
        where = ListFilter(
            principal=owner,
            status=status,
            kind=kind,
            session_id=session_id,
            rerun_of=rerun_of,
            batch_id=batch_id,
            service=service,
            text=text,
        )
        rows = await self.store.list_executions(where, cursor, limit + 1)
        page = [await self.record(f) if preview else execution_from(f) for f in rows[:limit]]
        next_cursor = page[-1].execution_id if len(rows) > limit else None
        return page, next_cursor

    async def changes(self, principal: Principal, after: int, limit: int) -> builtins.list[Change]:
        """The changes feed after `after`: each execution of `principal`'s that changed since, once,
        as it is now, in the order of those changes."""
        owner = None if principal.sees_all else principal.name
        found = await self.store.read_changes(owner, after, limit)
        return [Change(f.row.change_seq, f.row.change_type, execution_from(f)) for f in found]

    async def wait(
        self, principal: Principal, execution_id: str, kind: str | None, wait_ms: int
    ) -> tuple[Execution, bool]:
        """Wait up to `wait_ms` for a terminal status: (record, wait timed out)."""
        await self._found(principal, execution_id, kind)  # existence and visibility first
        final = None
        with trio.move_on_after(wait_ms / 1000):
            final = await self.wait_terminal(execution_id)
        execution = final or await self.get(principal, execution_id, kind)
        return execution, not execution.terminal

    async def wait_terminal(self, execution_id: str, *, fresh: bool = False) -> Execution | None:
        """The terminal record, once there is one (woken by commits, never by a timer); None if
        the daemon begins to stop first.

        `fresh`: the execution was accepted by this task without a checkpoint since, so it
        cannot be terminal yet: the first read is skipped.
        """
        with self.journal.watch(execution_id) as watch:
            if not fresh:
                found = await self.store.get_execution(execution_id)
                if found is None:
                    return None
                if found.row.status.terminal:
                    return final_record(found)
            while watch.final is None:
                if self.stopping.is_set():
                    return None
                # The daemon's stop wakes every watch (`Watches.wake_all`): one thing to wait on.
                await watch.wait_changed(watch.version)
            return final_record(watch.final)

    async def events(
        self, principal: Principal, execution_id: str, kind: str | None, after: int, limit: int
    ) -> EventsPage:
        """A page of committed events after `after`."""
        await self._found(principal, execution_id, kind)
        return await self.events_page(execution_id, after, limit)

    async def events_page(self, execution_id: str, after: int, limit: int) -> EventsPage:
        read = await self.store.read_events(execution_id, after, limit)
        events, row = read.events, read.row
        next_after = events[-1].sequence if events else after
        terminal = row is None or (row.status.terminal and next_after >= row.last_sequence)
        return EventsPage([e.body for e in events], next_after, terminal)

    async def stream_page(
        self,
        execution_id: str,
        after: int,
        limit: int,
        max_bytes: int,
        *,
        find_truncation: bool = True,
        types: frozenset[str] | None = None,
    ) -> StreamPage:
        """Committed events after `after` as SSE frames, for one read of a stream (only those of
        `types`, when given: the page still ends where the journal read ends).

        A page ends with the `output_truncated` event when it holds it, so that a stream can put
        the live display (which follows that event) in its place.
        """
        read = await self.store.read_events(
            execution_id,
            after,
            limit,
            max_bytes=max_bytes,
            stop_at="output_truncated",
            find_truncation=find_truncation,
        )
        events, row = read.events, read.row
        next_after = events[-1].sequence if events else after
        last = row.last_sequence if row is not None else next_after
        terminal = row is None or (row.status.terminal and next_after >= last)
        frames = "".join(
            f"id: {e.sequence}\nevent: {e.event_type}\ndata: {e.body}\n\n"
            for e in events
            if types is None or e.event_type in types
        )
        return StreamPage(
            frames, next_after, terminal, more=next_after < last, truncated_at=read.truncated_at
        )

    async def artifact_file(
        self, principal: Principal, execution_id: str, kind: str | None, name: str
    ) -> tuple[Path, int, str, str | None]:
        """(path, size, content type, node) of an artifact; NotFound for any name it does not
        have. `node` is the other node of a shared store whose disk holds it (None: this one's)."""
        found = await self._found(principal, execution_id, kind)
        path, size, content_type = self._artifact_in(found, name)
        owner = found.row.node_id
        elsewhere = (
            owner
            if self.settings.store_url is not None and owner not in (None, self.settings.node_id)
            else None
        )
        return path, size, content_type, elsewhere

    async def node_artifact_file(self, execution_id: str, name: str) -> tuple[Path, int, str]:
        """For another node (which checked its caller): an artifact of an execution this node ran."""
        found = await self.store.get_execution(execution_id) if EXECUTION_ID.fullmatch(execution_id) else None
        if found is None or found.row.node_id != self.settings.node_id:
            raise NotFound(f"node {self.settings.node_id} ran no execution {execution_id}")
        return self._artifact_in(found, name)

    def _artifact_in(self, found: Found, name: str) -> tuple[Path, int, str]:
        if self.deletes.removed_files(found.row.id):
            raise NotFound(
                f"execution {found.row.id} has no artifact {name!r} any more: a delete removed its "
                "files and has not finished (the next delete, or the daemon's next start, finishes it)"
            )
        for artifact in found.artifacts:
            if artifact.name == name and name in STREAMS:
                path = self.settings.layout.execution(found.row.id).spool(name)
                return path, artifact.size_bytes, artifact.content_type
        raise NotFound(f"execution {found.row.id} has no artifact {name!r}")
