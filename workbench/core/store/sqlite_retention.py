"""The SQLite engine's retention SQL: bulk deletes, giving space back, and the store's size.

The store is made with `auto_vacuum = INCREMENTAL` (see `sqlite_schema.prepare`): deleted rows
leave free pages, and `PRAGMA incremental_vacuum(N)` moves up to N of them to the end of the
file and truncates it. The file shrinks on disk when the WAL is next checkpointed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from workbench.core.store.rows import StoreStats
from workbench.wire.status import TERMINAL, ExecutionStatus

#: SQLite's `auto_vacuum` value for INCREMENTAL.
INCREMENTAL = 2
#: An execution that has ended.
_ENDED = f"status IN ({', '.join(repr(s.value) for s in sorted(TERMINAL))})"


def existing(conn: sqlite3.Connection, execution_ids: list[str]) -> set[str]:
    """Those of `execution_ids` that have a row."""
    found: set[str] = set()
    for start in range(0, len(execution_ids), 500):  # within SQLite's bound on parameters
        chunk = execution_ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found.update(r[0] for r in conn.execute(f"SELECT id FROM executions WHERE id IN ({marks})", chunk))
    return found


def find_terminal(
    conn: sqlite3.Connection,
    principal: str | None,
    statuses: Iterable[ExecutionStatus],
    ended_before: int | None,
    limit: int,
) -> list[str]:
    """Up to `limit` terminal executions that match, oldest first: their ids."""
    wanted = [s.value for s in statuses if s.terminal]
    if not wanted or limit <= 0:
        return []
    clauses = [f"status IN ({', '.join('?' for _ in wanted)})"]
    args: list[object] = list(wanted)
    if principal is not None:
        clauses.append("principal = ?")
        args.append(principal)
    if ended_before is not None:
        clauses.append("COALESCE(finished_at, created_at) < ?")
        args.append(ended_before)
    return [
        r[0]
        for r in conn.execute(
            f"SELECT id FROM executions WHERE {' AND '.join(clauses)} ORDER BY id LIMIT ?", (*args, limit)
        )
    ]


def delete_terminal(conn: sqlite3.Connection, execution_ids: Iterable[str]) -> list[str]:
    """Delete those of `execution_ids` that are terminal: their ids."""
    delete = f"DELETE FROM executions WHERE id = ? AND {_ENDED}"
    deleted = [i for i in execution_ids if conn.execute(delete, (i,)).rowcount]
    # Events and artifacts go with the row (ON DELETE CASCADE); acked exits by hand, since an
    # exit is not tied to its execution (an unacked one must outlive it).
    acked = "DELETE FROM exits WHERE execution_id = ? AND acked_at IS NOT NULL"
    conn.executemany(acked, [(i,) for i in deleted])
    return deleted


def reclaim(conn: sqlite3.Connection, max_bytes: int) -> bool:
    """Give back up to `max_bytes` of free pages; True when free pages are left to give back."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != INCREMENTAL:
        return False
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    pages = max(1, max_bytes // page_size)
    conn.execute(f"PRAGMA incremental_vacuum({pages})").fetchall()
    return int(conn.execute("PRAGMA freelist_count").fetchone()[0]) > 0


def stats(conn: sqlite3.Connection, path: Path, principal: str | None) -> StoreStats:
    """Counts by status, and the size of the database file with its WAL and shared memory."""
    if principal is None:
        rows = conn.execute("SELECT status, COUNT(*) FROM executions GROUP BY status").fetchall()
    else:
        rows = conn.execute(
            "SELECT status, COUNT(*) FROM executions WHERE principal = ? GROUP BY status", (principal,)
        ).fetchall()
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0]) * page_size
    size = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            size += path.with_name(path.name + suffix).stat().st_size
        except FileNotFoundError:
            pass
    return StoreStats({str(r[0]): int(r[1]) for r in rows}, size, free)


def checkpoint(path: Path) -> None:
    """Copy the WAL into the database file and empty the WAL, so that what incremental vacuum
    cut off the file is off the disk too (blocking). It waits a moment at most for readers and
    the writer; if they are still busy then, the WAL is emptied at a later checkpoint."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 200")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError:
        pass  # busy: SQLite's own checkpoints catch up
    finally:
        conn.close()
