"""The PostgreSQL engine: one writer thread with group commit, reader threads, a listener thread.

It mirrors the SQLite engine (`sqlite`): the writer runs every waiting job in one transaction,
each in its own savepoint, and commits once; after the commit each job's wake-ups run on the trio
thread before its caller resumes. psycopg's async API is asyncio-only, so its blocking API runs on
dedicated threads. The SQL is in `postgres_queries` and `sql/postgres/`.

Several daemons may share the database. Each commit that touched an execution also sends a
notification (`NOTIFY workbench`, in the same transaction, so it is delivered only if the commit
is); the listener thread of every other daemon hears it and wakes that execution's watchers there.
A daemon skips its own notifications: its watchers were woken at the commit already. When the
listener loses its connection it reconnects and wakes every watcher once, since notifications
may have been missed meanwhile: a watcher then reads again, so nothing is lost, and nothing is
ever polled on a timer.

A lost connection fails the writer's batch (`Unavailable`, nothing of it committed) and the
writer reconnects for the next one; the journal tries its writes again. A read is tried again on
a new connection for a while before it fails: a restart of the server is ridden out.
"""

from __future__ import annotations

import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import psycopg
import trio

from workbench.core.store import postgres_queries as q
from workbench.core.store.base import ExitBody, Store
from workbench.core.store.health import StoreHealth
from workbench.core.store.postgres_schema import connect, prepare, redacted
from workbench.core.store.rows import (
    ArtifactRow,
    EventBuilder,
    EventsRead,
    ExecutionRow,
    ExitLease,
    Found,
    ItemEvent,
    ListFilter,
)
from workbench.core.store.watch import Watches
from workbench.wire.errors import StorageFull, Unavailable
from workbench.wire.ids import new_delivery_id
from workbench.wire.status import ExecutionStatus

log = logging.getLogger("workbench.core.store")

T = TypeVar("T")
Conn = psycopg.Connection[Any]

_MAX_BATCH = 512
_READERS = 3
#: The channel every daemon of a database listens on.
CHANNEL = "workbench"
#: How long a read is tried again on new connections before it fails (a server restart).
_READ_RETRY_S = 20.0
#: The listener's longest wait between looks at its stop flag.
_LISTEN_SLICE_S = 0.5
_DISK_FULL = "53100"

#: Notification kinds: an execution changed, an execution ended, the exits feed changed, the
#: shared queue has work to claim, and (after the listener reconnected) anything may have.
CHANGED, ENDED, EXITS, QUEUED, EVERYTHING = "e", "t", "x", "q", "*"


@dataclass(eq=False)
class _Job(Generic[T]):
    fn: Callable[[Conn], T]
    on_commit: Callable[[T], None] | None = None
    #: What other daemons are told once it is committed: (kind, execution id) pairs.
    notes: Callable[[T], Iterable[tuple[str, str]]] | None = None
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None


_STOP = object()


class PostgresPending(Generic[T]):
    """A submitted write."""

    def __init__(self, job: _Job[T]) -> None:
        self._job = job

    async def result(self) -> T:
        """Wait (shielded) until it is committed; its result, or what it raised."""
        with trio.CancelScope(shield=True):
            await self._job.done.wait()
        if self._job.error is not None:
            raise self._job.error
        result: T = self._job.result
        return result


class _Broken(Exception):
    """The batch's transaction failed as a whole (the connection, the disk)."""


class PostgresEngine(Store):
    """The store's operations on a PostgreSQL database (see `postgres.PostgresStore` for the nodes')."""

    def __init__(self, url: str) -> None:
        self.url = url
        #: Marks this store's own notifications, which it skips.
        self.origin = secrets.token_hex(6)
        self._writes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reads: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self.watches = Watches()
        self.health = StoreHealth()
        #: Told (on the trio thread) of each execution another daemon changed or ended.
        self.on_remote: Callable[[str], None] | None = None

    @staticmethod
    def prepare(url: str) -> None:
        """Reach the server and migrate its schema (blocking; before `start`)."""
        prepare(url)

    def start(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._threads.append(threading.Thread(target=self._writer, name="workbench-pg-writer", daemon=True))
        for i in range(_READERS):
            self._threads.append(
                threading.Thread(target=self._reader, name=f"workbench-pg-reader-{i}", daemon=True)
            )
        self._threads.append(
            threading.Thread(target=self._listener, name="workbench-pg-listener", daemon=True)
        )
        for thread in self._threads:
            thread.start()

    async def aclose(self) -> None:
        self._writes.put(_STOP)
        for _ in range(_READERS):
            self._reads.put(_STOP)
        self._stopping.set()
        threads, self._threads = self._threads, []
        for thread in threads:
            await trio.to_thread.run_sync(thread.join)

    # -- submitting ---------------------------------------------------------------------------

    def _submit(
        self,
        fn: Callable[[Conn], T],
        on_commit: Callable[[T], None] | None = None,
        notes: Callable[[T], Iterable[tuple[str, str]]] | None = None,
    ) -> PostgresPending[T]:
        job: _Job[T] = _Job(fn, on_commit, notes)
        self._writes.put(job)
        return PostgresPending(job)

    async def _write(
        self,
        fn: Callable[[Conn], T],
        on_commit: Callable[[T], None] | None = None,
        notes: Callable[[T], Iterable[tuple[str, str]]] | None = None,
    ) -> T:
        return await self._submit(fn, on_commit, notes).result()

    async def _read(self, fn: Callable[[Conn], T]) -> T:
        job: _Job[T] = _Job(fn)
        self._reads.put(job)
        try:
            await job.done.wait()
        except trio.Cancelled:
            job.fn = _abandoned  # type: ignore[assignment]
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
    ) -> PostgresPending[int | None]:
        final: list[Found] = []
        batches: list[str] = []
        allowed = tuple(sources)

        def job(conn: Conn) -> int | None:
            row = q.transition(conn, execution_id, target, allowed, fields, event)
            if row is None:
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

        return self._submit(job, committed, notes)

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
            last = q.append_events(conn, execution_id, events, fields)
            if last is not None and artifacts:
                q.insert_artifacts(conn, execution_id, artifacts, created_at)
            return last if events else None

        return await self._write(
            job,
            lambda last: self.watches.notify(execution_id) if last is not None else None,
            lambda last: [(CHANGED, execution_id)] if last is not None else [],
        )

    async def set_detached(self, execution_id: str) -> bool:
        return await self._write(lambda conn: q.set_detached(conn, execution_id))

    async def delete_execution(self, execution_id: str) -> bool:
        return await self._write(lambda conn: q.delete_execution(conn, execution_id))

    # -- reading --------------------------------------------------------------------------------

    async def get_execution(self, execution_id: str) -> Found | None:
        return await self._read(lambda conn: q.get_found(conn, execution_id))

    async def list_executions(self, where: ListFilter, before: str | None, limit: int) -> list[Found]:
        return await self._read(lambda conn: q.list_executions(conn, where, before, limit))

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
        self, principal: str | None, now: int, lease_ms: int, limit: int
    ) -> list[ExitLease]:
        return await self._write(lambda conn: q.lease_exits(conn, principal, now, lease_ms, limit))

    async def next_exit_lease_end(self, principal: str | None) -> int | None:
        return await self._read(lambda conn: q.next_exit_lease_end(conn, principal))

    async def extend_exit_lease(self, delivery_id: str, until: int) -> None:
        await self._write(
            lambda conn: q.extend_exit_lease(conn, delivery_id, until), None, lambda _: [(EXITS, "")]
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
            elif kind == EVERYTHING:
                self.watches.notify_exits()
                self.watches.queue.bump()
                for watched in self.watches.watched():
                    self._spawn_refresh(watched)
                if self.on_remote is not None:
                    self.on_remote("")
            elif kind in (CHANGED, ENDED):
                self.watches.notify(execution_id)
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

    # -- threads -------------------------------------------------------------------------------

    def _deliver(self, jobs: Sequence[_Job[Any]], failure: tuple[bool, str] | None = None) -> None:
        if failure is not None:
            self.health.commit_failed(*failure)
        for job in jobs:
            if job.error is None and job.on_commit is not None:
                try:
                    job.on_commit(job.result)
                except Exception:
                    log.exception("store: on_commit callback failed")
            job.done.set()

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        assert self._token is not None
        try:
            self._token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            pass

    def _writer(self) -> None:
        conn: Conn | None = None
        try:
            while True:
                first = self._writes.get()
                if first is _STOP:
                    return
                batch: list[_Job[Any]] = [first]
                stop = False
                while len(batch) < _MAX_BATCH:
                    try:
                        nxt = self._writes.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        stop = True
                        break
                    batch.append(nxt)
                conn, failure = self._run_batch(conn, batch)
                self._post(self._deliver, batch, failure)
                if stop:
                    return
        finally:
            if conn is not None:
                conn.close()

    def _run_batch(
        self, conn: Conn | None, batch: list[_Job[Any]]
    ) -> tuple[Conn | None, tuple[bool, str] | None]:
        """Run and commit a batch; (the connection to go on with, None or (full, why) on failure)."""
        try:
            if conn is None:
                conn = connect(self.url)
            with conn.transaction():
                notes: list[str] = []
                for job in batch:
                    self._run_job(conn, job, notes)
                if notes:
                    conn.execute(
                        "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) AS p", (CHANNEL, sorted(set(notes)))
                    )
            return conn, None
        except (psycopg.Error, _Broken) as exc:
            cause = exc.__cause__ if isinstance(exc, _Broken) else exc
            full = isinstance(cause, psycopg.Error) and cause.sqlstate == _DISK_FULL
            if conn is not None and (conn.broken or conn.closed):
                conn = None
            elif conn is not None:
                try:
                    conn.rollback()
                except psycopg.Error:
                    conn.close()
                    conn = None
            if full:
                why = f"the disk under the store at {redacted(self.url)} is full: {cause}"
                error: Unavailable = StorageFull(why)
            else:
                why = f"the store at {redacted(self.url)} could not commit: {cause}"
                error = Unavailable(why)
            for job in batch:
                job.result, job.error = None, error
            return conn, (full, why)

    def _run_job(self, conn: Conn, job: _Job[Any], notes: list[str]) -> None:
        try:
            with conn.transaction():
                job.result = job.fn(conn)
        except psycopg.Error as exc:
            if conn.broken or exc.sqlstate == _DISK_FULL or isinstance(exc, psycopg.OperationalError):
                raise _Broken() from exc
            job.error = Unavailable(f"the store failed: {exc}")
            return
        except Exception as exc:
            job.error = exc
            return
        if job.notes is not None:
            notes.extend(f"{self.origin} {kind} {eid}" for kind, eid in job.notes(job.result))

    def _reader(self) -> None:
        conn: Conn | None = None
        try:
            while True:
                job = self._reads.get()
                if job is _STOP:
                    return
                conn = self._read_one(conn, job)
                self._post(self._deliver, [job])
        finally:
            if conn is not None:
                conn.close()

    def _read_one(self, conn: Conn | None, job: _Job[Any]) -> Conn | None:
        """Run a read in one snapshot, on new connections while the server is away (for a while)."""
        give_up = time.monotonic() + _READ_RETRY_S
        pause = 0.05
        while True:
            try:
                if conn is None:
                    conn = connect(self.url)
                    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                    conn.read_only = True
                with conn.transaction():
                    job.result = job.fn(conn)
                return conn
            except psycopg.Error as exc:
                if conn is not None and not (conn.broken or conn.closed):
                    job.error = Unavailable(f"the store failed: {exc}")
                    return conn
                conn = None
                if time.monotonic() > give_up or self._stopping.is_set() or job.fn is _abandoned:
                    job.error = Unavailable(f"the store at {redacted(self.url)} cannot be reached: {exc}")
                    return None
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
            except Exception as exc:
                job.error = exc
                return conn

    def _listener(self) -> None:
        pause = 0.05
        missed = False
        while not self._stopping.is_set():
            try:
                with connect(self.url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if missed:
                        # Notifications may have been lost while away: every watcher reads again.
                        log.warning("store: hearing the notifications of %s again", redacted(self.url))
                        self._post(self._heard, [f"- {EVERYTHING} "])
                        missed = False
                    pause = 0.05
                    while not self._stopping.is_set():
                        # Each one as it arrives; the slice only bounds how late a stop is seen.
                        for heard in conn.notifies(timeout=_LISTEN_SLICE_S):
                            self._post(self._heard, [heard.payload])
            except psycopg.Error as exc:
                if self._stopping.is_set():
                    return
                if not missed:
                    log.warning(
                        "store: lost the notifications of %s (%s); reconnecting", redacted(self.url), exc
                    )
                missed = True
                self._stopping.wait(pause)
                pause = min(pause * 2, 1.0)


def _created_notes(result: tuple[ExecutionRow, bool]) -> list[tuple[str, str]]:
    if not result[1]:
        return []
    # Work for the nodes to claim, unless its node took it at once.
    return [(CHANGED, result[0].id)] + ([(QUEUED, "")] if result[0].node_id is None else [])


def _abandoned(conn: Conn) -> None:
    """Stands in for a read whose caller was cancelled before the reader thread got to it."""
    return None


def _probe(conn: Conn) -> None:
    """A write that changes nothing yet needs the server to commit."""
    conn.execute("UPDATE workbench_schema SET version = version")
