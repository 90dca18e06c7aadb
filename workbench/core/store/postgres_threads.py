"""The PostgreSQL engine's threads: one writer with group commit, readers, a listener.

psycopg's async API is asyncio-only, so its blocking API runs here, on dedicated threads, as the
SQLite engine's does: the writer runs every waiting job in one transaction, each in its own
savepoint, and commits once; after the commit each job's wake-ups run on the trio thread before
its caller resumes. Each commit also sends the notifications its jobs asked for (`NOTIFY`, in the
same transaction, so they are delivered only if it commits); the listener hears those of the
other daemons and hands them to `_heard` on the trio thread.

A lost connection fails the writer's batch (`Unavailable`, nothing of it committed) and the
writer reconnects for the next one; the journal tries its writes again. A read is tried again on
a new connection for a while before it fails: a restart of the server is ridden out. When the
listener loses its connection it reconnects and reports that anything may have changed
(`EVERYTHING`), since notifications may have been missed meanwhile.
"""

from __future__ import annotations

import abc
import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import psycopg
import trio

from workbench.core.store.batching import LINGER_S, gather
from workbench.core.store.health import StoreHealth
from workbench.core.store.postgres_schema import connect, redacted
from workbench.wire.errors import StorageFull, Unavailable

log = logging.getLogger("workbench.core.store")

T = TypeVar("T")
Conn = psycopg.Connection[Any]

_READERS = 3
#: The channel every daemon of a database listens on.
CHANNEL = "workbench"
#: How long a read is tried again on new connections before it fails (a server restart).
_READ_RETRY_S = 20.0
#: The listener's longest wait between looks at its stop flag.
_LISTEN_SLICE_S = 0.5
_DISK_FULL = "53100"

#: Notification kinds: an execution changed, an execution ended, an execution was deleted, the
#: exits feed changed, the shared queue has work to claim, and (after the listener reconnected)
#: anything may have.
CHANGED, ENDED, DELETED, EXITS, QUEUED, EVERYTHING = "e", "t", "d", "x", "q", "*"


@dataclass(eq=False)
class _Job(Generic[T]):
    fn: Callable[[Conn], T]
    on_commit: Callable[[T], None] | None = None
    #: What other daemons are told once it is committed: (kind, execution id) pairs.
    notes: Callable[[T], Iterable[tuple[str, str]]] | None = None
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None
    #: Nobody waits for it at once: its commit may wait a few ms (`batching.LINGER_S`) for company.
    lazy: bool = False


_STOP = object()


class PostgresPending(Generic[T]):
    """A submitted write."""

    def __init__(self, job: _Job[T]) -> None:
        self._job = job

    async def wait(self) -> None:
        """Wait (cancellably) until it is committed or has failed."""
        await self._job.done.wait()

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


class PostgresThreads(abc.ABC):
    """The threads of a PostgreSQL store and the way jobs reach them; `_heard` is the engine's."""

    def __init__(self, url: str, *, linger_s: float = LINGER_S) -> None:
        self.url = url
        self._linger_s = linger_s
        #: Transactions committed (for tests of the group commit).
        self.commits = 0
        #: Marks this store's own notifications, which it skips.
        self.origin = secrets.token_hex(6)
        self._writes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reads: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self.health = StoreHealth()

    @abc.abstractmethod
    def _heard(self, payloads: list[str]) -> None:
        """On the trio thread: notifications of the database (other daemons' among them)."""

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
        *,
        lazy: bool = False,
    ) -> PostgresPending[T]:
        job: _Job[T] = _Job(fn, on_commit, notes, lazy=lazy)
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
                batch, stop = gather(self._writes, first, _STOP, self._linger_s)
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
            self.commits += 1
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


def _abandoned(conn: Conn) -> None:
    """Stands in for a read whose caller was cancelled before the reader thread got to it."""
    return None
