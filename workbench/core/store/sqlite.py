"""The SQLite store: one writer thread with group commit, a few reader threads, versioned schema.

All SQL of Workbench lives here (and in `sql/`). Callers hand the store small synchronous
functions of a connection (`write`, `read`); the writer thread runs every job that is waiting in
one transaction (each job in its own savepoint, so one failing job does not undo the others) and
commits once: under load many executions share one fsync, and a lone job commits at once.
After the commit each job's `on_commit` callback runs on the trio thread, before its caller
resumes: that is where the journal wakes readers, so nothing is visible before it is durable.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

import trio

from workbench.wire.errors import ConfigError, Unavailable
from workbench.wire.status import TERMINAL, ExecutionStatus

log = logging.getLogger("workbench.core.store.sqlite")

T = TypeVar("T")
Row = dict[str, Any]

#: Most jobs one transaction takes; keeps a commit's latency bounded under a flood.
_MAX_BATCH = 512
_READERS = 3
_TERMINAL_SQL = ", ".join(f"'{s.value}'" for s in sorted(TERMINAL))


@dataclass(eq=False)
class _Job(Generic[T]):
    fn: Callable[[sqlite3.Connection], T]
    on_commit: Callable[[T], None] | None = None
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None


_STOP = object()


class Pending(Generic[T]):
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


def migrations() -> list[tuple[int, str, str]]:
    """The numbered migration files, in order: (version, name, sql)."""
    found = []
    for entry in resources.files("workbench.core.store.sql.sqlite").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append((int(name[:4]), name, entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migration files are not numbered 1..n: {versions}")
    return found


SCHEMA_VERSION = len(migrations())


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every Workbench connection uses."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 10000")
    conn.execute("PRAGMA foreign_keys = ON")
    # FULL: a commit is on disk before it is acknowledged, so no committed event is ever lost.
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def prepare(path: Path) -> None:
    """Open (or create) the database file, check it, and migrate it to the current schema.

    Raises:
        ConfigError: the file is damaged, not a database, or newer than this Workbench.
    """
    try:
        # The store holds every principal's commands and output: only this user may read it.
        # SQLite gives its -wal and -shm files the database file's mode.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        os.chmod(path, 0o600)
        conn = connect(path)
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise ConfigError(f"the store {path} cannot use WAL mode (got {mode!r})")
            check = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if check != ["ok"]:
                raise ConfigError(
                    f"the store {path} is damaged ({'; '.join(check[:3])}); move it aside to start "
                    "with an empty store, or restore it from a backup"
                )
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ConfigError(
                    f"the store {path} has schema version {version}, newer than this Workbench "
                    f"({SCHEMA_VERSION}); upgrade Workbench"
                )
            for number, name, sql in migrations():
                if number <= version:
                    continue
                log.info("store: applying migration %s", name)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for statement in _split_sql(sql):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {number}")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise ConfigError(
            f"the store {path} cannot be opened: {exc}; if the file is damaged, move it aside to "
            "start with an empty store"
        ) from None


def _split_sql(script: str) -> list[str]:
    """Statements of a migration file (no triggers with inner semicolons are used)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class Store:
    """The daemon's database: `write` on the one writer thread, `read` on reader threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reads: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self.failed: BaseException | None = None

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
        self._writes.put(_STOP)
        for _ in range(_READERS):
            self._reads.put(_STOP)
        threads, self._threads = self._threads, []
        for thread in threads:
            await trio.to_thread.run_sync(thread.join)

    async def write(
        self, fn: Callable[[sqlite3.Connection], T], on_commit: Callable[[T], None] | None = None
    ) -> T:
        """Run `fn` in a write transaction; returns once it is committed (durably).

        A write, once submitted, is not cancellable: the caller waits for it under a shield so
        that what it believes and what the store holds never diverge.

        Raises:
            Unavailable: the store failed (for example the disk is full).
            Exception: whatever `fn` raised; its changes are rolled back, other jobs' are not.
        """
        return await self.submit(fn, on_commit).result()

    def submit(
        self, fn: Callable[[sqlite3.Connection], T], on_commit: Callable[[T], None] | None = None
    ) -> Pending[T]:
        """Queue a write now (writes commit in the order they are submitted); await it later.

        Raises:
            Unavailable: the store failed (for example the disk is full).
        """
        if self.failed is not None:
            raise Unavailable(f"the store failed: {self.failed}")
        job: _Job[T] = _Job(fn, on_commit)
        self._writes.put(job)
        return Pending(job)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on a reader connection (a consistent snapshot) and return its result."""
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

    def _deliver(self, jobs: Sequence[_Job[Any]]) -> None:
        for job in jobs:
            if job.error is None and job.on_commit is not None:
                try:
                    job.on_commit(job.result)
                except Exception:  # a wake-up must never break the writer's deliveries
                    log.exception("store: on_commit callback failed")
            job.done.set()

    def _post(self, jobs: Sequence[_Job[Any]]) -> None:
        assert self._token is not None
        try:
            self._token.run_sync_soon(self._deliver, jobs)
        except trio.RunFinishedError:
            pass

    def _writer(self) -> None:
        conn = connect(self.path)
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
                self._run_batch(conn, batch)
                self._post(batch)
                if stop:
                    return
        finally:
            conn.close()

    def _run_batch(self, conn: sqlite3.Connection, batch: list[_Job[Any]]) -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO job")
                    job.error = exc
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            log.error("store: commit failed: %s", exc)
            self.failed = exc
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            for job in batch:
                job.error = Unavailable(f"the store failed: {exc}")

    def _reader(self) -> None:
        conn = connect(self.path)
        try:
            while True:
                job = self._reads.get()
                if job is _STOP:
                    return
                try:
                    conn.execute("BEGIN")
                    try:
                        job.result = job.fn(conn)
                    finally:
                        conn.execute("COMMIT")
                except Exception as exc:
                    job.error = exc
                self._post([job])
        finally:
            conn.close()


def _abandoned(conn: sqlite3.Connection) -> None:
    """Stands in for a read whose caller was cancelled before the reader thread got to it."""
    return None


# ---------------------------------------------------------------------------------------------
# The queries. Each is a plain function of a connection, run by `Store.write` or `Store.read`.

_LIVE = ("queued", "running", "cancel_requested")


def insert_execution(conn: sqlite3.Connection, row: Row, first_event: Callable[[int, str], str]) -> None:
    """Insert an execution and its first status event (sequence 1)."""
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(
        f"INSERT INTO executions ({columns}, last_sequence) VALUES ({marks}, 1)", tuple(row.values())
    )
    conn.execute(
        "INSERT INTO events (execution_id, sequence, event_type, body) VALUES (?, 1, 'status', ?)",
        (row["id"], first_event(1, row["status"])),
    )


def find_by_idempotency_key(conn: sqlite3.Connection, principal: str, key: str) -> Row | None:
    cur = conn.execute(
        "SELECT * FROM executions WHERE principal = ? AND idempotency_key = ?",
        (principal, key),
    )
    found = cur.fetchone()
    return dict(found) if found is not None else None


def transition(
    conn: sqlite3.Connection,
    execution_id: str,
    target: ExecutionStatus,
    sources: Iterable[ExecutionStatus],
    fields: Mapping[str, Any],
    event: Callable[[int, str], str],
) -> Row | None:
    """The guarded status update and its event, in the caller's transaction.

    Returns the updated row (its `last_sequence` is the event's sequence), or None when the
    execution was not in one of `sources` (nothing is written then).
    """
    allowed = tuple(s.value for s in sources)
    sets = "".join(f", {name} = ?" for name in fields)
    cur = conn.execute(
        f"UPDATE executions SET status = ?, last_sequence = last_sequence + 1{sets} "
        f"WHERE id = ? AND status IN ({', '.join('?' for _ in allowed)}) RETURNING *",
        (target.value, *fields.values(), execution_id, *allowed),
    )
    found = cur.fetchone()
    if found is None:
        return None
    row = dict(found)
    sequence: int = row["last_sequence"]
    conn.execute(
        "INSERT INTO events (execution_id, sequence, event_type, body) VALUES (?, ?, 'status', ?)",
        (execution_id, sequence, event(sequence, target.value)),
    )
    return row


def append_events(
    conn: sqlite3.Connection,
    execution_id: str,
    events: Sequence[tuple[str, Callable[[int, str], str]]],
    fields: Mapping[str, Any],
) -> int | None:
    """Append events (type, body-builder) to a live execution and update `fields` with them.

    Returns the last sequence, or None when the execution is already terminal (nothing written:
    the terminal status event stays the last event).
    """
    sets = "".join(f", {name} = ?" for name in fields)
    cur = conn.execute(
        f"UPDATE executions SET last_sequence = last_sequence + ?{sets} "
        f"WHERE id = ? AND status NOT IN ({_TERMINAL_SQL}) RETURNING last_sequence, status",
        (len(events), *fields.values(), execution_id),
    )
    found = cur.fetchone()
    if found is None:
        return None
    last: int = found[0]
    status: str = found[1]
    first = last - len(events) + 1
    conn.executemany(
        "INSERT INTO events (execution_id, sequence, event_type, body) VALUES (?, ?, ?, ?)",
        [(execution_id, first + i, kind, build(first + i, status)) for i, (kind, build) in enumerate(events)],
    )
    return last


def update_execution(conn: sqlite3.Connection, execution_id: str, fields: Mapping[str, Any]) -> None:
    """Set columns that are not the status (counters, child info)."""
    sets = ", ".join(f"{name} = ?" for name in fields)
    conn.execute(f"UPDATE executions SET {sets} WHERE id = ?", (*fields.values(), execution_id))


def set_detached(conn: sqlite3.Connection, execution_id: str) -> bool:
    """Mark a live execution detached; False when it has already ended (nothing changes)."""
    cur = conn.execute(
        f"UPDATE executions SET detached = 1 WHERE id = ? AND status NOT IN ({_TERMINAL_SQL})",
        (execution_id,),
    )
    return cur.rowcount == 1


def detached_metadata(conn: sqlite3.Connection, execution_id: str) -> str | None:
    """The metadata JSON of a detached execution ("" when it has none); None if not detached."""
    found = conn.execute(
        "SELECT detached, metadata_json FROM executions WHERE id = ?", (execution_id,)
    ).fetchone()
    if found is None or not found[0]:
        return None
    return found[1] or ""


def get_execution(conn: sqlite3.Connection, execution_id: str) -> Row | None:
    found = conn.execute("SELECT * FROM executions WHERE id = ?", (execution_id,)).fetchone()
    return dict(found) if found is not None else None


def get_execution_with_artifacts(conn: sqlite3.Connection, execution_id: str) -> tuple[Row, list[Row]] | None:
    row = get_execution(conn, execution_id)
    if row is None:
        return None
    return row, list_artifacts(conn, execution_id)


def list_executions(
    conn: sqlite3.Connection,
    *,
    principal: str | None,
    status: str | None,
    kind: str | None,
    session_id: str | None,
    before: str | None,
    limit: int,
) -> list[tuple[Row, list[Row]]]:
    """Newest first; `before` is the id of the last row of the previous page."""
    where, args = [], []
    for column, value in (
        ("principal", principal),
        ("status", status),
        ("kind", kind),
        ("session_id", session_id),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if before is not None:
        where.append("id < ?")
        args.append(before)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT * FROM executions {clause} ORDER BY id DESC LIMIT ?", (*args, limit)
    ).fetchall()
    return [(dict(r), list_artifacts(conn, r["id"])) for r in rows]


def live_executions(conn: sqlite3.Connection) -> list[Row]:
    """Every execution that is not terminal, oldest first (recovery and scheduling order)."""
    rows = conn.execute(
        "SELECT * FROM executions WHERE status IN ('queued', 'running', 'cancel_requested') ORDER BY id"
    ).fetchall()
    return [dict(r) for r in rows]


def events_after(
    conn: sqlite3.Connection,
    execution_id: str,
    after: int,
    limit: int,
    max_bytes: int | None = None,
    stop_at: str | None = None,
) -> list[tuple[int, str, str]]:
    """(sequence, event_type, body) of the events after `after`, in order.

    At most `limit` events; no more once `max_bytes` of bodies are gathered (at least one);
    none after an event of type `stop_at`.
    """
    cur = conn.execute(
        "SELECT sequence, event_type, body FROM events WHERE execution_id = ? AND sequence > ? "
        "ORDER BY sequence LIMIT ?",
        (execution_id, after, limit),
    )
    out: list[tuple[int, str, str]] = []
    size = 0
    for row in cur:
        out.append((row[0], row[1], row[2]))
        size += len(row[2])
        if (max_bytes is not None and size >= max_bytes) or row[1] == stop_at:
            break
    return out


def truncation_sequence(conn: sqlite3.Connection, execution_id: str) -> int | None:
    """The sequence of the execution's `output_truncated` event, if it has one."""
    found = conn.execute(
        "SELECT sequence FROM events WHERE execution_id = ? AND event_type = 'output_truncated'",
        (execution_id,),
    ).fetchone()
    return None if found is None else int(found[0])


def list_artifacts(conn: sqlite3.Connection, execution_id: str) -> list[Row]:
    rows = conn.execute(
        "SELECT name, size_bytes, sha256, content_type FROM artifacts WHERE execution_id = ? ORDER BY name",
        (execution_id,),
    ).fetchall()
    return [dict(r) for r in rows]


def insert_artifact(
    conn: sqlite3.Connection,
    execution_id: str,
    name: str,
    size: int,
    sha256: str,
    content_type: str,
    now: int,
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO artifacts (execution_id, name, size_bytes, sha256, content_type, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (execution_id, name, size, sha256, content_type, now),
    )


def delete_execution(conn: sqlite3.Connection, execution_id: str) -> bool:
    """Delete a terminal execution with its events and artifacts; False if it is not terminal."""
    cur = conn.execute(
        f"DELETE FROM executions WHERE id = ? AND status IN ({_TERMINAL_SQL})", (execution_id,)
    )
    return cur.rowcount == 1


def count_queued(conn: sqlite3.Connection) -> int:
    count: int = conn.execute("SELECT count(*) FROM executions WHERE status = 'queued'").fetchone()[0]
    return count


# -- exits feed ----------------------------------------------------------------------------------


def insert_exit(
    conn: sqlite3.Connection,
    delivery_id: str,
    execution_id: str,
    principal: str,
    body: Mapping[str, Any],
    now: int,
) -> None:
    conn.execute(
        "INSERT INTO exits (delivery_id, execution_id, principal, body, created_at) VALUES (?, ?, ?, ?, ?)",
        (delivery_id, execution_id, principal, json.dumps(body), now),
    )


def lease_exits(
    conn: sqlite3.Connection, principal: str | None, now: int, lease_ms: int, limit: int
) -> list[tuple[str, str, int]]:
    """Hand out up to `limit` unacked exits whose lease has expired: (delivery_id, body, attempt)."""
    where = "acked_at IS NULL AND lease_until <= ?"
    args: list[Any] = [now]
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    rows = conn.execute(
        f"UPDATE exits SET attempt = attempt + 1, lease_until = ? WHERE delivery_id IN "
        f"(SELECT delivery_id FROM exits WHERE {where} ORDER BY delivery_id LIMIT ?) "
        "RETURNING delivery_id, body, attempt",
        (now + lease_ms, *args, limit),
    ).fetchall()
    return sorted((r[0], r[1], r[2]) for r in rows)


def next_exit_lease_end(conn: sqlite3.Connection, principal: str | None) -> int | None:
    """When the earliest leased-out unacked exit becomes available again (ms), if any."""
    where = "acked_at IS NULL"
    args: list[Any] = []
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    found = conn.execute(f"SELECT min(lease_until) FROM exits WHERE {where}", args).fetchone()
    value: int | None = found[0]
    return value


def extend_exit_lease(conn: sqlite3.Connection, delivery_id: str, until: int) -> None:
    """Hide an unacked exit until `until` (ms): when a failed delivery is tried again."""
    conn.execute(
        "UPDATE exits SET lease_until = ? WHERE delivery_id = ? AND acked_at IS NULL", (until, delivery_id)
    )


def ack_exit(conn: sqlite3.Connection, delivery_id: str, principal: str | None, now: int) -> bool:
    """Mark an exit delivered; False when no such exit is visible to `principal`."""
    where = "delivery_id = ?"
    args: list[Any] = [delivery_id]
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    found = conn.execute(f"SELECT acked_at FROM exits WHERE {where}", args).fetchone()
    if found is None:
        return False
    if found[0] is None:
        conn.execute("UPDATE exits SET acked_at = ? WHERE delivery_id = ?", (now, delivery_id))
    return True
