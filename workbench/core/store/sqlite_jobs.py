"""The SQLite engine's jobs: a write or read queued for its threads, and the helpers they run.

A job is run by the writer thread (in the batch's transaction, in its own savepoint) or by a
reader thread; its result and error are handed back on the trio thread (`done`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import trio

log = logging.getLogger("workbench.core.store")

T = TypeVar("T")


@dataclass(eq=False)
class Job(Generic[T]):
    fn: Callable[[sqlite3.Connection], T]
    on_commit: Callable[[T], None] | None = None
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None
    #: Nobody waits for it at once: its commit may wait a few ms (`batching.LINGER_S`) for company.
    lazy: bool = False


STOP = object()


class SQLitePending(Generic[T]):
    """A submitted write."""

    def __init__(self, job: Job[T]) -> None:
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


def abandoned(conn: sqlite3.Connection) -> None:
    """Stands in for a read whose caller was cancelled before the reader thread got to it."""
    return None


def probe(conn: sqlite3.Connection) -> None:
    """A write that changes nothing yet needs room on the disk: the header page is rewritten."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    conn.execute(f"PRAGMA user_version = {version}")


def abandon(conn: sqlite3.Connection | None) -> sqlite3.Connection | None:
    """Roll back what is left of a failed transaction; None when the connection is unusable."""
    if conn is None or not conn.in_transaction:
        return conn
    try:
        conn.execute("ROLLBACK")
        return conn
    except sqlite3.Error as exc:
        log.error("store: rollback failed (%s); reconnecting", exc)
        conn.close()
        return None
