"""The SQLite engine: one writer thread with group commit, a few reader threads.

The writer thread runs every job that is waiting in one transaction (each job in its own
savepoint, so one failing job does not undo the others) and commits once: under load many
executions share one fsync, and a lone job commits at once (a lone lazy one, which nobody
awaits yet, first waits up to 10 ms for another to share its commit). After the commit each job's
wake-ups run on the trio thread, before its caller resumes, so nothing is visible before it is
durable. The SQL is in `sqlite_queries` and `sql/sqlite/`.

A full disk (SQLITE_FULL) or an I/O error fails the whole batch: SQLite may already have rolled
the transaction back (no savepoint is left to roll back to), so the batch is undone as one, each
of its jobs is told (`StorageFull` or `Unavailable`), `health` hears of it, and the writer goes on
with the next batch: nothing is failed for good. Errors of SQLite never leave this module as they
are: they become the Workbench errors above.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import trio

from workbench.core.store import sqlite_queries as q
from workbench.core.store import sqlite_retention as retention
from workbench.core.store.base import ExitBody, Store
from workbench.core.store.batching import LINGER_S, gather, transition_after
from workbench.core.store.health import StoreHealth, free_bytes
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
from workbench.core.store.sqlite_errors import is_full as _is_full
from workbench.core.store.sqlite_errors import is_storage as _is_storage
from workbench.core.store.sqlite_errors import translated as _translated
from workbench.core.store.sqlite_jobs import STOP, Job, SQLitePending, abandon, abandoned, probe
from workbench.core.store.sqlite_schema import connect, prepare
from workbench.core.store.watch import Watches
from workbench.wire.errors import StorageFull, Unavailable
from workbench.wire.ids import new_delivery_id
from workbench.wire.status import ExecutionStatus

log = logging.getLogger("workbench.core.store")

T = TypeVar("T")

_READERS = 3


class SQLiteStore(Store):
    """The embedded store: `_write` on the one writer thread, `_read` on reader threads."""

    def __init__(self, path: Path, *, linger_s: float = LINGER_S) -> None:
        self.path = path
        self._linger_s = linger_s
        self._writes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reads: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self.watches = Watches()
        self.health = StoreHealth()
        self.disowned: set[str] = set()
        #: Transactions the writer committed (each one fsync under `synchronous = FULL`).
        self.commits = 0

    @staticmethod
    def prepare(path: Path) -> None:
        """Create or migrate the database file (blocking; before `start`). See `sqlite_schema`."""
        prepare(path)

    def start(self) -> None:
        """Start the threads; call from the trio thread after `prepare`."""
        self._token = trio.lowlevel.current_trio_token()
        writer = threading.Thread(target=self._writer, name="workbench-store-writer", daemon=True)
        self._threads.append(writer)
        for i in range(_READERS):
            self._threads.append(
                threading.Thread(target=self._reader, name=f"workbench-store-reader-{i}", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    async def aclose(self) -> None:
        """Finish every queued write, then stop the threads."""
        self._writes.put(STOP)
        for _ in range(_READERS):
            self._reads.put(STOP)
        threads, self._threads = self._threads, []
        for thread in threads:
            await trio.to_thread.run_sync(thread.join)

    async def _write(
        self, fn: Callable[[sqlite3.Connection], T], on_commit: Callable[[T], None] | None = None
    ) -> T:
        """Run `fn` in a write transaction; returns once it is committed (durably).

        A write, once submitted, is not cancellable: the caller waits for it under a shield so
        that what it believes and what the store holds never diverge.

        Raises:
            StorageFull: the disk is full; nothing of it was written.
            Unavailable: the store could not commit it otherwise; nothing of it was written.
            Exception: whatever `fn` raised; its changes are rolled back, other jobs' are not.
        """
        return await self._submit(fn, on_commit).result()

    def _submit(
        self,
        fn: Callable[[sqlite3.Connection], T],
        on_commit: Callable[[T], None] | None = None,
        *,
        lazy: bool = False,
    ) -> SQLitePending[T]:
        """Queue a write now (writes commit in the order they are submitted); await it later."""
        job: Job[T] = Job(fn, on_commit, lazy=lazy)
        self._writes.put(job)
        return SQLitePending(job)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on a reader connection (a consistent snapshot) and return its result."""
        job: Job[T] = Job(fn)
        self._reads.put(job)
        try:
            await job.done.wait()
        except trio.Cancelled:
            job.fn = abandoned  # type: ignore[assignment]
            raise
        if job.error is not None:
            raise job.error
        result: T = job.result
        return result

    # -- accepting ------------------------------------------------------------------------------

    async def create_execution(
        self, row: ExecutionRow, first_event: EventBuilder
    ) -> tuple[ExecutionRow, bool]:
        key = row.idempotency_key

        def create(conn: sqlite3.Connection) -> tuple[ExecutionRow, bool]:
            if key is not None:
                found = q.find_by_idempotency_key(conn, row.principal, key)
                if found is not None:
                    return found, False
            q.insert_execution(conn, row, first_event)
            return row, True

        def created(r: tuple[ExecutionRow, bool]) -> None:
            self.watches.notify(r[0].id)
            if r[1]:
                self.watches.notify_changes()

        return await self._write(create, created)

    async def create_batch(
        self,
        batch: ExecutionRow,
        items: Sequence[ExecutionRow],
        first_event: EventBuilder,
        item_event: ItemEvent,
    ) -> tuple[ExecutionRow, bool]:
        key = batch.idempotency_key

        def create(conn: sqlite3.Connection) -> tuple[ExecutionRow, bool]:
            if key is not None:
                found = q.find_by_idempotency_key(conn, batch.principal, key)
                if found is not None:
                    return found, False
            q.insert_batch(conn, batch, items, first_event, item_event)
            return batch, True

        return await self._write(create, lambda r: self.watches.notify(r[0].id))

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
    ) -> SQLitePending[int | None]:
        final: list[Found] = []
        batches: list[str] = []
        allowed = tuple(sources)

        def job(conn: sqlite3.Connection) -> int | None:
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
                # The final record, handed to watchers: waits answer without reading it again.
                final.append(q.found_of(conn, row))
            return row.last_sequence

        def committed(sequence: int | None) -> None:
            if sequence is not None:
                self.watches.notify(execution_id, final[0] if final else None)
                for batch_id in batches:
                    self.watches.notify(batch_id)
                self.watches.notify_changes()
                if target.terminal:
                    self.watches.notify_exits()

        return self._submit(job, committed, lazy=lazy)

    async def append_events(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any],
        *,
        artifacts: Sequence[ArtifactRow] = (),
        created_at: int = 0,
    ) -> int | None:
        def job(conn: sqlite3.Connection) -> int | None:
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

        return await self._write(job, appended)

    async def set_detached(self, execution_id: str) -> bool:
        return await self._write(lambda conn: q.set_detached(conn, execution_id))

    async def delete_execution(self, execution_id: str) -> bool:
        return await self._write(lambda conn: q.delete_execution(conn, execution_id))

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
        return await self._write(lambda conn: retention.delete_terminal(conn, wanted))

    async def existing(self, execution_ids: Sequence[str]) -> set[str]:
        wanted = list(execution_ids)
        return await self._read(lambda conn: retention.existing(conn, wanted))

    async def reclaim(self, max_bytes: int) -> bool:
        more = await self._write(lambda conn: retention.reclaim(conn, max_bytes))
        if not more:  # the file is shortened on disk by the checkpoint
            await trio.to_thread.run_sync(retention.checkpoint, self.path)
        return more

    async def stats(self, principal: str | None) -> StoreStats:
        return await self._read(lambda conn: retention.stats(conn, self.path, principal))

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
        def read(conn: sqlite3.Connection) -> EventsRead:
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
        await self._write(lambda conn: q.defer_exit_webhook(conn, delivery_id, attempt, until))
        self.watches.notify_exits()

    async def ack_exit(self, delivery_id: str, principal: str | None, now: int) -> bool:
        return await self._write(lambda conn: q.ack_exit(conn, delivery_id, principal, now))

    async def probe(self) -> None:
        await self._write(probe)

    # -- threads -------------------------------------------------------------------------------

    def _deliver(self, jobs: Sequence[Job[Any]], failure: tuple[bool, str] | None = None) -> None:
        if failure is not None:
            self.health.commit_failed(*failure)
        for job in jobs:
            if job.error is None and job.on_commit is not None:
                try:
                    job.on_commit(job.result)
                except Exception:  # a wake-up must never break the writer's deliveries
                    log.exception("store: on_commit callback failed")
            job.done.set()

    def _post(self, jobs: Sequence[Job[Any]], failure: tuple[bool, str] | None = None) -> None:
        assert self._token is not None
        try:
            self._token.run_sync_soon(self._deliver, jobs, failure)
        except trio.RunFinishedError:
            pass

    def _writer(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                first = self._writes.get()
                if first is STOP:
                    return
                batch, stop = gather(self._writes, first, STOP, self._linger_s)
                conn, failure = self._run_batch(conn, batch)
                self._post(batch, failure)
                if stop:
                    return
        finally:
            if conn is not None:
                conn.close()

    def _run_batch(
        self, conn: sqlite3.Connection | None, batch: list[Job[Any]]
    ) -> tuple[sqlite3.Connection | None, tuple[bool, str] | None]:
        """Run and commit a batch; (the connection to go on with, None or (full, why) on failure)."""
        try:
            if conn is None:
                conn = connect(self.path)  # the last one broke: a new one for each batch until one works
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(conn)
                except Exception as exc:
                    if isinstance(exc, sqlite3.Error) and (_is_storage(exc) or not conn.in_transaction):
                        raise  # the transaction itself failed (and may be gone): the whole batch
                    conn.execute("ROLLBACK TO job")
                    job.error = _translated(exc)
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
            self.commits += 1
            return conn, None
        except sqlite3.Error as exc:
            conn = abandon(conn)
            full = _is_full(exc, self.path)
            if full:
                free = free_bytes(self.path.parent)
                why = f"the disk holding the data dir is full ({free} bytes free): {exc}"
                error: Unavailable = StorageFull(why)
            else:
                why = f"the store could not commit: {exc}"
                error = Unavailable(why)
            for job in batch:
                job.result, job.error = None, error
            return conn, (full, why)

    def _reader(self) -> None:
        conn = connect(self.path)
        try:
            while True:
                job = self._reads.get()
                if job is STOP:
                    return
                try:
                    conn.execute("BEGIN")
                    try:
                        job.result = job.fn(conn)
                    finally:
                        conn.execute("COMMIT")
                except Exception as exc:
                    job.error = _translated(exc)
                self._post([job])
        finally:
            conn.close()
