"""The PostgreSQL engine's retention: ended executions found and deleted in bulk, and the store's
counts and size (`Store.find_terminal`, `Store.delete_terminal`, `Store.stats`). PostgreSQL's
autovacuum makes the space of deleted rows reusable by itself; `reclaim` has nothing to do here."""

from __future__ import annotations

from collections.abc import Iterable

from workbench.core.store.postgres_threads import Conn
from workbench.core.store.rows import StoreStats
from workbench.wire.status import TERMINAL, ExecutionStatus

#: The tables whose size is the store's (with their indexes and TOAST).
_TABLES = ("executions", "events", "artifacts", "exits")


def existing(conn: Conn, execution_ids: list[str]) -> set[str]:
    """Those of `execution_ids` that have a row."""
    rows = conn.execute("SELECT id FROM executions WHERE id = ANY(%s)", (execution_ids,)).fetchall()
    return {str(r[0]) for r in rows}


def find_terminal(
    conn: Conn,
    principal: str | None,
    statuses: Iterable[ExecutionStatus],
    ended_before: int | None,
    limit: int,
) -> list[str]:
    """Up to `limit` terminal executions that match, oldest first: their ids."""
    wanted = [s.value for s in statuses if s.terminal]
    if not wanted or limit <= 0:
        return []
    clauses = ["status = ANY(%s)"]
    args: list[object] = [wanted]
    if principal is not None:
        clauses.append("principal = %s")
        args.append(principal)
    if ended_before is not None:
        clauses.append("COALESCE(finished_at, created_at) < %s")
        args.append(ended_before)
    rows = conn.execute(
        f"SELECT id FROM executions WHERE {' AND '.join(clauses)} ORDER BY id LIMIT %s", (*args, limit)
    ).fetchall()
    return [str(r[0]) for r in rows]


def delete_terminal(conn: Conn, execution_ids: list[str]) -> list[str]:
    """Delete those of `execution_ids` that are terminal: their ids."""
    # Locked in the order of their ids, so that two nodes deleting the same ones never deadlock.
    rows = conn.execute(
        "DELETE FROM executions WHERE id IN (SELECT id FROM executions WHERE id = ANY(%s) "
        "AND status = ANY(%s) ORDER BY id FOR UPDATE) RETURNING id",
        (execution_ids, [s.value for s in TERMINAL]),
    ).fetchall()
    ids = sorted(str(r[0]) for r in rows)
    if ids:
        # Events and artifacts go with the row (ON DELETE CASCADE); an unacked exit outlives it.
        conn.execute("DELETE FROM exits WHERE execution_id = ANY(%s) AND acked_at IS NOT NULL", (ids,))
    return ids


def stats(conn: Conn, principal: str | None) -> StoreStats:
    """Counts by status, and the bytes the store's tables take (free space inside is not known)."""
    if principal is None:
        rows = conn.execute("SELECT status, COUNT(*) FROM executions GROUP BY status").fetchall()
    else:
        rows = conn.execute(
            "SELECT status, COUNT(*) FROM executions WHERE principal = %s GROUP BY status", (principal,)
        ).fetchall()
    sizes = conn.execute(
        "SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0) FROM unnest(%s::text[]) AS t",
        (list(_TABLES),),
    ).fetchone()
    size = int(sizes[0]) if sizes is not None else 0
    return StoreStats({str(r[0]): int(r[1]) for r in rows}, size, 0)
