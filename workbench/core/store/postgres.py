"""The PostgreSQL store: the engine's operations (`postgres_engine`) and the nodes' (`NodeStore`).

Every daemon on the database is a node: it beats its heart into `nodes` (the database's clock),
claims queued executions from the shared queue when it has free slots (`FOR UPDATE SKIP LOCKED`:
nodes claiming at once never wait for each other and never take the same row), and learns of a
cancel asked on another node from the execution's row. A node whose heartbeat is older than its
lease is lost: what it claimed and never started goes back to the queue; what it ran is ended by
the guarded transitions of the living (`workbench.core.cluster`). Only a node that has itself beaten
without a gap (none longer than half its lease) for the lost node's lease judges it so: after the
database, or the judging node, was away, every living node first gets a lease to beat again.
"""

from __future__ import annotations

from typing import Any

from psycopg.rows import dict_row

from workbench.core.store.base import SharedStore
from workbench.core.store.postgres_engine import CHANGED, QUEUED, Conn, PostgresEngine
from workbench.core.store.rows import ExecutionRow

#: Nodes whose heartbeat is within their lease (the database's clock).
_ALIVE = (
    "SELECT node_id FROM nodes WHERE heartbeat_at >= clock_timestamp() - lease_ms * interval '1 millisecond'"
)
#: The nodes that the node of the query's parameter may take for lost: their heartbeat is older
#: than their lease, and that node's own heartbeats have come without a gap for as long (a gap of
#: more than half its lease starts its run again, `heartbeat`), up to one within half its lease.
_LOST = (
    "SELECT n.node_id FROM nodes n JOIN nodes me ON me.node_id = %s "
    "WHERE n.heartbeat_at < clock_timestamp() - n.lease_ms * interval '1 millisecond' "
    "AND me.beating_since <= clock_timestamp() - n.lease_ms * interval '1 millisecond' "
    "AND me.heartbeat_at >= clock_timestamp() - me.lease_ms * interval '0.5 millisecond'"
)
_LIVE_STATUSES = "('running', 'cancel_requested')"


def _rows(conn: Conn, sql: str, args: tuple[Any, ...]) -> list[ExecutionRow]:
    with conn.cursor(row_factory=dict_row) as cur:
        return [ExecutionRow.from_mapping(r) for r in cur.execute(sql, args).fetchall()]


def _claim(conn: Conn, node_id: str, limit: int, workspaces: str) -> list[ExecutionRow]:
    heads = _rows(
        conn,
        # A start without a cwd runs in the session's workspace on the node that claims it.
        "UPDATE executions SET node_id = %s, row_version = row_version + 1, cwd = CASE WHEN cwd = '' "
        "THEN %s || '/' || principal || '/' || session_id ELSE cwd END WHERE id IN ("
        "SELECT id FROM executions WHERE status = 'queued' AND node_id IS NULL AND batch_id IS NULL "
        "AND (node_pin IS NULL OR node_pin = %s) ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING *",
        (node_id, workspaces, node_id, limit),
    )
    heads.sort(key=lambda r: r.id)
    out: list[ExecutionRow] = []
    for head in heads:
        out.append(head)
        if head.kind == "batch":
            items = _rows(
                conn,
                "UPDATE executions SET node_id = %s, row_version = row_version + 1 "
                "WHERE batch_id = %s AND node_id IS NULL RETURNING *",
                (node_id, head.id),
            )
            out.extend(sorted(items, key=lambda r: r.id))
    return out


def _claim_one(conn: Conn, node_id: str, execution_id: str, workspaces: str) -> ExecutionRow | None:
    rows = _rows(
        conn,
        "UPDATE executions SET node_id = %s, row_version = row_version + 1, cwd = CASE WHEN cwd = '' "
        "THEN %s || '/' || principal || '/' || session_id ELSE cwd END WHERE id = %s "
        "AND status = 'queued' AND node_id IS NULL AND batch_id IS NULL AND kind <> 'batch' "
        "AND (node_pin IS NULL OR node_pin = %s) RETURNING *",
        (node_id, workspaces, execution_id, node_id),
    )
    return rows[0] if rows else None


class PostgresStore(PostgresEngine, SharedStore):
    """A store in a PostgreSQL database that other daemons may share."""

    async def heartbeat(self, node_id: str, url: str | None, lease_ms: int, *, joining: bool = False) -> None:
        def beat(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO nodes (node_id, url, lease_ms) VALUES (%s, %s, %s) ON CONFLICT (node_id) "
                "DO UPDATE SET url = excluded.url, lease_ms = excluded.lease_ms, "
                "heartbeat_at = clock_timestamp(), beating_since = CASE WHEN %s OR nodes.heartbeat_at "
                "< clock_timestamp() - nodes.lease_ms * interval '0.5 millisecond' "
                "THEN clock_timestamp() ELSE nodes.beating_since END",
                (node_id, url, lease_ms, joining),
            )

        await self._write(beat)

    async def live_nodes(self) -> dict[str, str | None]:
        def read(conn: Conn) -> dict[str, str | None]:
            rows = conn.execute(f"SELECT node_id, url FROM nodes WHERE node_id IN ({_ALIVE})").fetchall()
            return {r[0]: r[1] for r in rows}

        return await self._read(read)

    async def queue_depth(self, principal: str, node_id: str) -> tuple[int, int]:
        def read(conn: Conn) -> tuple[int, int]:
            found = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE principal = %s) FROM executions "
                "WHERE status = 'queued' AND kind <> 'batch' AND node_id IS DISTINCT FROM %s",
                (principal, node_id),
            ).fetchone()
            return (0, 0) if found is None else (int(found[0]), int(found[1]))

        return await self._read(read)

    async def claim(self, node_id: str, limit: int, workspaces: str) -> list[ExecutionRow]:
        def claimed(rows: list[ExecutionRow]) -> None:
            for row in rows:
                self.watches.notify(row.id)

        return await self._write(
            lambda conn: _claim(conn, node_id, limit, workspaces),
            claimed,
            lambda rows: [(CHANGED, r.id) for r in rows],
        )

    async def claim_one(self, node_id: str, execution_id: str, workspaces: str) -> ExecutionRow | None:
        return await self._write(
            lambda conn: _claim_one(conn, node_id, execution_id, workspaces),
            lambda row: self.watches.notify(row.id) if row is not None else None,
            lambda row: [(CHANGED, row.id)] if row is not None else [],
        )

    async def ask_cancel(self, execution_id: str, reason: str | None, grace_ms: int) -> bool:
        def ask(conn: Conn) -> bool:
            cur = conn.execute(
                "UPDATE executions SET cancel_reason = %s, cancel_grace_ms = %s, "
                "row_version = row_version + 1 WHERE id = %s AND status IN ('queued', 'running') "
                "AND cancel_grace_ms IS NULL",
                (reason, grace_ms, execution_id),
            )
            return cur.rowcount == 1

        return await self._write(ask, None, lambda asked: [(CHANGED, execution_id)] if asked else [])

    async def release_lost_claims(self, node_id: str) -> int:
        def release(conn: Conn) -> int:
            cur = conn.execute(
                "UPDATE executions SET node_id = NULL, row_version = row_version + 1 "
                f"WHERE status = 'queued' AND node_id IN ({_LOST}) "
                # A batch's items stay with their batch, which a lost node held: they end with it.
                "AND batch_id IS NULL AND kind <> 'batch' AND child_json IS NULL",
                (node_id,),
            )
            return cur.rowcount

        def released(count: int) -> None:
            if count:
                self.watches.queue.bump()

        return await self._write(release, released, lambda n: [(QUEUED, "")] if n else [])

    async def lost_executions(self, node_id: str) -> list[ExecutionRow]:
        return await self._read(
            lambda conn: _rows(
                conn,
                f"SELECT * FROM executions WHERE (status IN {_LIVE_STATUSES} OR (status = 'queued' AND "
                "(kind = 'batch' OR batch_id IS NOT NULL OR child_json IS NOT NULL))) "
                f"AND node_id IN ({_LOST}) ORDER BY id",
                (node_id,),
            )
        )

    async def taken_for_lost(self, node_id: str, since: int) -> list[ExecutionRow]:
        return await self._read(
            lambda conn: _rows(
                conn,
                "SELECT * FROM executions WHERE node_id = %s AND error_code = 'node_lost' "
                "AND child_json IS NOT NULL AND finished_at >= %s ORDER BY id",
                (node_id, since),
            )
        )

    async def overdue_unclaimed(self, node_id: str, now: int) -> list[ExecutionRow]:
        return await self._read(
            lambda conn: _rows(
                conn,
                "SELECT * FROM executions WHERE status = 'queued' AND deadline_at <= %s "
                f"AND (node_id IS NULL OR node_id IN ({_LOST})) ORDER BY id",
                (now, node_id),
            )
        )
