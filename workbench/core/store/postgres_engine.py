"""The PostgreSQL engine's operations: the store interface on a database daemons may share.

It mirrors the SQLite engine (`sqlite`) operation for operation; its threads (writer with group
commit, readers, listener) are in `postgres_threads`, its SQL in `postgres_queries` and
`sql/postgres/`.

Several daemons may share the database. Each commit that touched an execution also notifies the
others (`NOTIFY workbench`), whose listeners wake that execution's watchers there. A daemon skips
its own notifications: its watchers were woken at the commit already. After the listener lost its
connection, every watcher reads again: nothing is lost, and nothing is ever polled on a timer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import trio

from workbench.core.store import postgres_queries as q
from workbench.core.store import postgres_retention as retention
from workbench.core.store.base import ExitBody, Store
from workbench.core.store.batching import LINGER_S, transition_after
from workbench.core.store.postgres_schema import prepare
from workbench.core.store.postgres_threads import (
    CHANGED,
    DELETED,
    ENDED,
    EVERYTHING,
    EXITS,
    QUEUED,
    Conn,
    PostgresPending,
    PostgresThreads,
)
from workbench.core.store.rows import (
    ArtifactRow,
    EventBuilder,
    EventsRead,
    ExecutionRow,
    ExitLease,
    Found,
    ItemEvent,
    ListFilter,
    StoreStats,
)
from workbench.core.store.watch import Watches
from workbench.wire.errors import Unavailable
from workbench.wire.ids import new_delivery_id
from workbench.wire.status import ExecutionStatus

log = logging.getLogger("workbench.core.store")

__all__ = ["CHANGED", "QUEUED", "Conn", "PostgresEngine"]


class PostgresEngine(PostgresThreads, Store):
    """The store's operations on a PostgreSQL database (see `postgres.PostgresStore` for the nodes')."""

    def __init__(self, url: str, *, linger_s: float = LINGER_S) -> None:
        super().__init__(url, linger_s=linger_s)
        self.watches = Watches()
        self.disowned: set[str] = set()
        #: Told (on the trio thread) of each execution another daemon changed or ended.
        self.on_remote: Callable[[str], None] | None = None

    @staticmethod
    def prepare(url: str) -> str:
        """Reach the server and migrate its schema (blocking; before `start`); the store's identity."""
        return prepare(url)

    # -- accepting ------------------------------------------------------------------------------

    async def create_execution(
        self, row: ExecutionRow, first_event: EventBuilder
    ) -> tuple[ExecutionRow, bool]:
        key = row.idempotency_key

        def create(conn: Conn) -> tuple[ExecutionRow, bool]:
            if key is not None:
                found = q.find_by_idempotency_key(conn, row.principal, key)
                if found is not None:
                    return found, False
            if q.insert_execution(conn, row, first_event):
                return row, True
            assert key is not None  # only a key can make the insert do nothing
            won = q.find_by_idempotency_key(conn, row.principal, key)
            if won is None:
                raise Unavailable("an execution with this idempotency key was deleted meanwhile; try again")
            return won, False

        return await self._write(create, self._created, _created_notes)

    async def create_batch(
        self,
        batch: ExecutionRow,
        items: Sequence[ExecutionRow],
        first_event: EventBuilder,
        item_event: ItemEvent,
    ) -> tuple[ExecutionRow, bool]:
        key = batch.idempotency_key

        def create(conn: Conn) -> tuple[ExecutionRow, bool]:
            if key is not None:
                found = q.find_by_idempotency_key(conn, batch.principal, key)
                if found is not None:
                    return found, False
            if q.insert_batch(conn, batch, items, first_event, item_event):
                return batch, True
            assert key is not None
            won = q.find_by_idempotency_key(conn, batch.principal, key)
            if won is None:
                raise Unavailable("an execution with this idempotency key was deleted meanwhile; try again")
            return won, False

        return await self._write(create, self._created, _created_notes)

    def _created(self, result: tuple[ExecutionRow, bool]) -> None:
        self.watches.notify(result[0].id)
        if result[1]:
            self.watches.notify_changes()
        if result[1] and result[0].node_id is None:
            self.watches.queue.bump()

    async def find_by_idempotency_key(self, principal: str, key: str) -> ExecutionRow | None:
        return await self._read(lambda conn: q.find_by_idempotency_key(conn, principal, key))

    # -- the journal ----------------------------------------------------------------------------

    def begin_transition(
        self,
        execution_id: str,
        target: ExecutionStatus,
        sources: Iterable[ExecutionStatus],
        fields: Mapping[str, Any],
        event: EventBuilder,
        *,
        exit_body: ExitBody | None = None,
        item_event: ItemEvent | None = None,
        lazy: bool = False,
        owner: str | None = None,
        before: Sequence[tuple[str, EventBuilder]] = (),
    ) -> PostgresPending[int | None]:
        final: list[Found] = []
        batches: list[str] = []
        allowed = tuple(sources)

        def job(conn: Conn) -> int | None:
            row = transition_after(q, conn, execution_id, target, allowed, fields, event, owner, before)
            if row is None:
                if owner is not None and q.owner_of(conn, execution_id) != owner:
                    self.disowned.add(execution_id)  # refused for its owner, not for its status
                return None
            if (
                row.batch_id is not None
                and item_event is not None
                and q.append_events(conn, row.batch_id, [("item", item_event(row))], {}) is not None
            ):
                batches.append(row.batch_id)
            if exit_body is not None and row.detached:
                body = exit_body(row)
                q.insert_exit(
                    conn, new_delivery_id(), execution_id, row.principal, body, row.finished_at or 0
                )
            if target.terminal:
                final.append(q.found_of(conn, row))
            return row.last_sequence

        def committed(sequence: int | None) -> None:
            if sequence is not None:
                self.watches.notify(execution_id, final[0] if final else None)
                self.watches.notify_changes()
                for batch_id in batches:
                    self.watches.notify(batch_id)
                if target.terminal:
                    self.watches.notify_exits()

        def notes(sequence: int | None) -> list[tuple[str, str]]:
            if sequence is None:
                return []
            out = [(ENDED if target.terminal else CHANGED, execution_id)]
            out += [(CHANGED, batch_id) for batch_id in batches]
            if target.terminal:
                out.append((EXITS, ""))
            return out

        return self._submit(job, committed, notes, lazy=lazy)

    async def append_events(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any],
        *,
        artifacts: Sequence[ArtifactRow] = (),
        created_at: int = 0,
    ) -> int | None:
        def job(conn: Conn) -> int | None:
            if execution_id in self.disowned:
                return None
            last = q.append_events(conn, execution_id, events, fields)
            if last is not None and artifacts:
                q.insert_artifacts(conn, execution_id, artifacts, created_at)
            return last if events else None

        progress = any(kind == "progress" for kind, _ in events)

        def appended(last: int | None) -> None:
            if last is not None:
                self.watches.notify(execution_id)
                if progress:
                    self.watches.notify_changes()

        return await self._write(
            job, appended, lambda last: [(CHANGED, execution_id)] if last is not None else []
        )

    async def set_detached(self, execution_id: str) -> bool:
        return await self._write(lambda conn: q.set_detached(conn, execution_id))

    async def delete_execution(self, execution_id: str) -> bool:
        return await self._write(
            lambda conn: q.delete_execution(conn, execution_id),
            notes=lambda deleted: [(DELETED, execution_id)] if deleted else [],
        )

    async def find_terminal(
        self,
        principal: str | None,
        statuses: Iterable[ExecutionStatus],
        ended_before: int | None,
        limit: int,
    ) -> list[str]:
        wanted = tuple(statuses)
        return await self._read(
            lambda conn: retention.find_terminal(conn, principal, wanted, ended_before, limit)
        )

    async def delete_terminal(self, execution_ids: Sequence[str]) -> list[str]:
        wanted = list(execution_ids)
        return await self._write(
            lambda conn: retention.delete_terminal(conn, wanted),
            notes=lambda ids: [(DELETED, execution_id) for execution_id in ids],
        )

    async def existing(self, execution_ids: Sequence[str]) -> set[str]:
        wanted = list(execution_ids)
        return await self._read(lambda conn: retention.existing(conn, wanted))

    async def reclaim(self, max_bytes: int) -> bool:
        return False  # autovacuum makes deleted rows' space reusable by itself

    async def stats(self, principal: str | None) -> StoreStats:
        return await self._read(lambda conn: retention.stats(conn, principal))

    # -- reading --------------------------------------------------------------------------------

    async def get_execution(self, execution_id: str) -> Found | None:
        return await self._read(lambda conn: q.get_found(conn, execution_id))

    async def list_executions(self, where: ListFilter, before: str | None, limit: int) -> list[Found]:
        return await self._read(lambda conn: q.list_executions(conn, where, before, limit))

    async def read_changes(self, principal: str | None, after: int, limit: int) -> list[Found]:
        return await self._read(lambda conn: q.changes_after(conn, principal, after, limit))

    async def change_head(self) -> int:
        return await self._read(q.change_head)

    async def live_executions(self) -> list[ExecutionRow]:
        return await self._read(q.live_executions)

    async def read_events(
        self,
        execution_id: str,
        after: int,
        limit: int,
        *,
        max_bytes: int | None = None,
        stop_at: str | None = None,
        find_truncation: bool = False,
    ) -> EventsRead:
        def read(conn: Conn) -> EventsRead:
            events = q.events_after(conn, execution_id, after, limit, max_bytes, stop_at)
            row = q.get_execution(conn, execution_id)
            truncated_at = None
            if find_truncation and row is not None and row.truncated:
                truncated_at = q.truncation_sequence(conn, execution_id)
            return EventsRead(events, row, truncated_at)

        return await self._read(read)

    # -- the exits feed -------------------------------------------------------------------------

    async def lease_exits(
        self, principal: str | None, now: int, lease_ms: int, limit: int, *, webhook: bool = False
    ) -> list[ExitLease]:
        return await self._write(lambda conn: q.lease_exits(conn, principal, now, lease_ms, limit, webhook))

    async def next_exit_lease_end(self, principal: str | None, *, webhook: bool = False) -> int | None:
        return await self._read(lambda conn: q.next_exit_lease_end(conn, principal, webhook))

    async def defer_exit_webhook(self, delivery_id: str, attempt: int, until: int) -> None:
        await self._write(
            lambda conn: q.defer_exit_webhook(conn, delivery_id, attempt, until),
            None,
            lambda _: [(EXITS, "")],
        )
        self.watches.notify_exits()

    async def ack_exit(self, delivery_id: str, principal: str | None, now: int) -> bool:
        return await self._write(lambda conn: q.ack_exit(conn, delivery_id, principal, now))

    async def probe(self) -> None:
        await self._write(_probe)

    # -- wake-ups from other daemons ----------------------------------------------------------

    def _heard(self, payloads: list[str]) -> None:
        """On the trio thread: wake the watchers of what other daemons committed."""
        for payload in payloads:
            origin, _, rest = payload.partition(" ")
            if origin == self.origin:
                continue
            kind, _, execution_id = rest.partition(" ")
            if kind == EXITS:
                self.watches.notify_exits()
            elif kind == QUEUED:
                self.watches.queue.bump()
                self.watches.notify_changes()
            elif kind == EVERYTHING:
                self.watches.notify_exits()
                self.watches.notify_changes()
                self.watches.queue.bump()
                for watched in self.watches.watched():
                    self._spawn_refresh(watched)
                if self.on_remote is not None:
                    self.on_remote("")
                if self.on_deleted is not None:
                    self.on_deleted("")
            elif kind == DELETED:
                if self.on_deleted is not None:
                    self.on_deleted(execution_id)
            elif kind in (CHANGED, ENDED):
                self.watches.notify(execution_id)
                # Another node's change may be one of the changes feed's: its readers look again.
                self.watches.notify_changes()
                if kind == ENDED:
                    self.watches.notify_exits()
                    if self.watches.is_watched(execution_id):
                        self._spawn_refresh(execution_id)
                if self.on_remote is not None:
                    self.on_remote(execution_id)

    def _spawn_refresh(self, execution_id: str) -> None:
        trio.lowlevel.spawn_system_task(self._refresh, execution_id, name=f"store refresh {execution_id}")

    async def _refresh(self, execution_id: str) -> None:
        """Read an execution another daemon changed and hand its watchers the final record."""
        try:
            found = await self.get_execution(execution_id)
        except Exception as exc:  # a wake-up must never crash the daemon
            log.warning("store: could not read %s after a notification: %s", execution_id, exc)
            self.watches.notify(execution_id)
            return
        final = found if found is not None and found.row.status.terminal else None
        self.watches.notify(execution_id, final)


def _created_notes(result: tuple[ExecutionRow, bool]) -> list[tuple[str, str]]:
    if not result[1]:
        return []
    # Work for the nodes to claim, unless its node took it at once.
    return [(CHANGED, result[0].id)] + ([(QUEUED, "")] if result[0].node_id is None else [])


def _probe(conn: Conn) -> None:
    """A write that changes nothing yet needs the server to commit."""
    conn.execute("UPDATE workbench_schema SET version = version")
