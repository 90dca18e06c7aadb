"""The SQLite engine's SQL: plain functions of a connection, run inside the engine's transactions.

Every statement of the SQLite engine is here (the schema is in `sql/sqlite/`). Column names that
come from callers are checked against the schema's (`check_columns`) before they reach SQL text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.core.store.rows import (
    ArtifactRow,
    EventBuilder,
    EventRow,
    ExecutionRow,
    ExitLease,
    Found,
    ItemEvent,
    ItemRow,
    ListFilter,
    WithData,
    check_columns,
    render_body,
)
from workbench.wire.status import TERMINAL, ExecutionStatus

_TERMINAL_SQL = ", ".join(f"'{s.value}'" for s in sorted(TERMINAL))
_INSERT_EVENT = "INSERT INTO events (execution_id, sequence, event_type, body, data) VALUES (?, ?, ?, ?, ?)"


def _execution(found: sqlite3.Row | None) -> ExecutionRow | None:
    return ExecutionRow.from_mapping(dict(found)) if found is not None else None


def insert_execution(conn: sqlite3.Connection, row: ExecutionRow, first_event: EventBuilder) -> None:
    """Insert an execution and its first status event (sequence 1)."""
    values = row.columns()
    values["last_sequence"] = 1
    values["row_version"] = 1
    values["change_seq"] = next_change(conn)
    values["change_type"] = "created"
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO executions ({columns}) VALUES ({marks})", tuple(values.values()))
    conn.execute(_INSERT_EVENT, (row.id, 1, "status", first_event(1, row.status.value), None))


def insert_batch(
    conn: sqlite3.Connection,
    batch: ExecutionRow,
    items: Sequence[ExecutionRow],
    first_event: EventBuilder,
    item_event: ItemEvent,
) -> None:
    """Insert a batch, its items (each with its first status event) and, in the batch's journal
    after its own first event, one `item` event per item: all in the caller's transaction."""
    insert_execution(conn, batch, first_event)
    if not items:
        return
    # One statement each for the rows and the events: a batch has up to a thousand of each.
    values = [item.columns() | {"last_sequence": 1, "row_version": 1} for item in items]
    columns = ", ".join(values[0])
    marks = ", ".join("?" for _ in values[0])
    conn.executemany(
        f"INSERT INTO executions ({columns}) VALUES ({marks})", [tuple(v.values()) for v in values]
    )
    conn.executemany(
        _INSERT_EVENT, [(item.id, 1, "status", first_event(1, item.status.value), None) for item in items]
    )
    status = batch.status.value
    conn.executemany(
        _INSERT_EVENT,
        [(batch.id, 2 + i, "item", item_event(item)(2 + i, status), None) for i, item in enumerate(items)],
    )
    conn.execute("UPDATE executions SET last_sequence = ? WHERE id = ?", (1 + len(items), batch.id))


def find_by_idempotency_key(conn: sqlite3.Connection, principal: str, key: str) -> ExecutionRow | None:
    cur = conn.execute(
        "SELECT * FROM executions WHERE principal = ? AND idempotency_key = ?", (principal, key)
    )
    return _execution(cur.fetchone())


def transition(
    conn: sqlite3.Connection,
    execution_id: str,
    target: ExecutionStatus,
    sources: Iterable[ExecutionStatus],
    fields: Mapping[str, Any],
    event: EventBuilder,
    owner: str | None = None,
) -> ExecutionRow | None:
    """The guarded status update and its event, in the caller's transaction.

    Returns the updated row (its `last_sequence` is the event's sequence), or None when the
    execution was not in one of `sources`, or `owner` is given and the execution is not that
    node's (nothing is written then).
    """
    check_columns(fields)
    allowed = tuple(s.value for s in sources)
    sets = "".join(f", {name} = ?" for name in fields)
    change = "terminal" if target.terminal else "status"
    mine, owned = (" AND node_id = ?", (owner,)) if owner is not None else ("", ())
    cur = conn.execute(
        f"UPDATE executions SET status = ?, last_sequence = last_sequence + 1, "
        f"row_version = row_version + 1, change_seq = ?, change_type = ?{sets} "
        f"WHERE id = ? AND status IN ({', '.join('?' for _ in allowed)}){mine} RETURNING *",
        (target.value, next_change(conn), change, *fields.values(), execution_id, *allowed, *owned),
    )
    row = _execution(cur.fetchone())
    if row is None:
        return None
    conn.execute(
        _INSERT_EVENT,
        (execution_id, row.last_sequence, "status", event(row.last_sequence, target.value), None),
    )
    return row


def append_events(
    conn: sqlite3.Connection,
    execution_id: str,
    events: Sequence[tuple[str, EventBuilder]],
    fields: Mapping[str, Any],
) -> int | None:
    """Append events (type, body-builder) to a live execution and update `fields` with them.

    Returns the last sequence, or None when the execution is already terminal (nothing written:
    the terminal status event stays the last event).
    """
    check_columns(fields)
    sets = "".join(f", {name} = ?" for name in fields)
    cur = conn.execute(
        f"UPDATE executions SET last_sequence = last_sequence + ?, row_version = row_version + 1{sets} "
        f"WHERE id = ? AND status NOT IN ({_TERMINAL_SQL}) RETURNING last_sequence, status",
        (len(events), *fields.values(), execution_id),
    )
    found = cur.fetchone()
    if found is None:
        return None
    last: int = found[0]
    status: str = found[1]
    first = last - len(events) + 1
    rows = [
        (execution_id, first + i, kind, build(first + i, status), _data(build))
        for i, (kind, build) in enumerate(events)
    ]
    conn.executemany(_INSERT_EVENT, rows)
    progress = [r[3] for r in rows if r[2] == "progress"]
    if progress:
        conn.execute(
            "UPDATE executions SET change_seq = ?, change_type = 'progress', progress_json = ? WHERE id = ?",
            (next_change(conn), progress[-1], execution_id),
        )
    return last


def next_change(conn: sqlite3.Connection) -> int:
    """The next number of the changes feed (in the caller's transaction)."""
    found = conn.execute("UPDATE change_counter SET n = n + 1 RETURNING n").fetchone()
    return int(found[0])


def change_head(conn: sqlite3.Connection) -> int:
    """The number of the latest change committed."""
    return int(conn.execute("SELECT n FROM change_counter").fetchone()[0])


def changes_after(conn: sqlite3.Connection, principal: str | None, after: int, limit: int) -> list[Found]:
    """The executions whose latest change is after `after`, in the order of their changes."""
    where, args = "change_seq > ?", list[Any]([after])
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    rows = conn.execute(
        f"SELECT * FROM executions WHERE {where} ORDER BY change_seq LIMIT ?", (*args, limit)
    ).fetchall()
    return [found_of(conn, ExecutionRow.from_mapping(dict(r))) for r in rows]


def _data(build: EventBuilder) -> bytes | None:
    return build.data if isinstance(build, WithData) else None


def set_detached(conn: sqlite3.Connection, execution_id: str) -> bool:
    cur = conn.execute(
        # Detaching again changes nothing: the version grows only when it was not detached.
        f"UPDATE executions SET row_version = row_version + 1 - detached, detached = 1 "
        f"WHERE id = ? AND status NOT IN ({_TERMINAL_SQL})",
        (execution_id,),
    )
    return cur.rowcount == 1


def get_execution(conn: sqlite3.Connection, execution_id: str) -> ExecutionRow | None:
    return _execution(conn.execute("SELECT * FROM executions WHERE id = ?", (execution_id,)).fetchone())


def get_found(conn: sqlite3.Connection, execution_id: str) -> Found | None:
    row = get_execution(conn, execution_id)
    return None if row is None else found_of(conn, row)


def found_of(conn: sqlite3.Connection, row: ExecutionRow) -> Found:
    """A row with its artifacts, and a batch's with its items."""
    items = batch_items(conn, row.id) if row.kind == "batch" else None
    return Found(row, list_artifacts(conn, row.id), items)


def batch_items(conn: sqlite3.Connection, batch_id: str) -> list[ItemRow]:
    """A batch's items in the order they were given (their ids grow in that order)."""
    rows = conn.execute(
        "SELECT id, kind, status, exit_code, cpu_user_ms, cpu_system_ms, peak_memory_bytes "
        "FROM executions WHERE batch_id = ? ORDER BY id",
        (batch_id,),
    ).fetchall()
    return [ItemRow(r[0], r[1], ExecutionStatus(r[2]), r[3], r[4], r[5], r[6]) for r in rows]


def list_executions(
    conn: sqlite3.Connection, where: ListFilter, before: str | None, limit: int
) -> list[Found]:
    """Newest first; `before` is the id of the last row of the previous page."""
    clauses, args = [], []
    for column, value in (
        ("principal", where.principal),
        ("status", where.status),
        ("kind", where.kind),
        ("session_id", where.session_id),
        ("rerun_of", where.rerun_of),
        ("batch_id", where.batch_id),
        ("service", None if where.service is None else int(where.service)),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if where.text is not None:
        clauses.append(
            "instr(lower(id || ' ' || coalesce(command, '') || ' ' || coalesce(code, '') || ' ' "
            "|| coalesce(metadata_json, '')), lower(?)) > 0"
        )
        args.append(where.text)
    if before is not None:
        clauses.append("id < ?")
        args.append(before)
    clause = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = conn.execute(
        f"SELECT * FROM executions {clause} ORDER BY id DESC LIMIT ?", (*args, limit)
    ).fetchall()
    return [found_of(conn, ExecutionRow.from_mapping(dict(r))) for r in rows]


def live_executions(conn: sqlite3.Connection) -> list[ExecutionRow]:
    rows = conn.execute(
        "SELECT * FROM executions WHERE status IN ('queued', 'running', 'cancel_requested') ORDER BY id"
    ).fetchall()
    return [ExecutionRow.from_mapping(dict(r)) for r in rows]


def events_after(
    conn: sqlite3.Connection,
    execution_id: str,
    after: int,
    limit: int,
    max_bytes: int | None = None,
    stop_at: str | None = None,
) -> list[EventRow]:
    """The events after `after`, in order (see `Store.read_events` for the bounds)."""
    cur = conn.execute(
        "SELECT sequence, event_type, body, data FROM events WHERE execution_id = ? AND sequence > ? "
        "ORDER BY sequence LIMIT ?",
        (execution_id, after, limit),
    )
    out: list[EventRow] = []
    size = 0
    for row in cur:
        body = render_body(row[2], row[3])
        out.append(EventRow(row[0], row[1], body))
        size += len(body)
        if (max_bytes is not None and size >= max_bytes) or row[1] == stop_at:
            break
    return out


def truncation_sequence(conn: sqlite3.Connection, execution_id: str) -> int | None:
    found = conn.execute(
        "SELECT sequence FROM events WHERE execution_id = ? AND event_type = 'output_truncated'",
        (execution_id,),
    ).fetchone()
    return None if found is None else int(found[0])


def list_artifacts(conn: sqlite3.Connection, execution_id: str) -> list[ArtifactRow]:
    rows = conn.execute(
        "SELECT name, size_bytes, sha256, content_type FROM artifacts WHERE execution_id = ? ORDER BY name",
        (execution_id,),
    ).fetchall()
    return [ArtifactRow(r[0], r[1], r[2], r[3]) for r in rows]


def insert_artifacts(
    conn: sqlite3.Connection, execution_id: str, artifacts: Sequence[ArtifactRow], now: int
) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO artifacts (execution_id, name, size_bytes, sha256, content_type, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(execution_id, a.name, a.size_bytes, a.sha256, a.content_type, now) for a in artifacts],
    )


def delete_execution(conn: sqlite3.Connection, execution_id: str) -> bool:
    cur = conn.execute(
        f"DELETE FROM executions WHERE id = ? AND status IN ({_TERMINAL_SQL})", (execution_id,)
    )
    return cur.rowcount == 1


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
        (delivery_id, execution_id, principal, json.dumps(body, allow_nan=False), now),
    )


def lease_exits(
    conn: sqlite3.Connection, principal: str | None, now: int, lease_ms: int, limit: int, webhook: bool
) -> list[ExitLease]:
    where = "acked_at IS NULL AND lease_until <= ?"
    args: list[Any] = [now]
    if webhook:  # not one whose delivery failed lately: the webhook tries it again later
        where += " AND webhook_after <= ?"
        args.append(now)
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    if lease_ms == 0:
        # A look without a lease: nothing changes, and the attempt shown is the one a lease would be.
        rows = conn.execute(
            f"SELECT delivery_id, body, attempt + 1 FROM exits WHERE {where} ORDER BY delivery_id LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [ExitLease(r[0], r[1], r[2]) for r in rows]
    rows = conn.execute(
        f"UPDATE exits SET attempt = attempt + 1, lease_until = ? WHERE delivery_id IN "
        f"(SELECT delivery_id FROM exits WHERE {where} ORDER BY delivery_id LIMIT ?) "
        "RETURNING delivery_id, body, attempt",
        (now + lease_ms, *args, limit),
    ).fetchall()
    return sorted((ExitLease(r[0], r[1], r[2]) for r in rows), key=lambda e: e.delivery_id)


def next_exit_lease_end(conn: sqlite3.Connection, principal: str | None, webhook: bool) -> int | None:
    # For the webhook, an exit comes back once neither a lease nor its backoff holds it.
    end = "max(lease_until, webhook_after)" if webhook else "lease_until"
    where = "acked_at IS NULL"
    args: list[Any] = []
    if principal is not None:
        where += " AND principal = ?"
        args.append(principal)
    found = conn.execute(f"SELECT min({end}) FROM exits WHERE {where}", args).fetchone()
    value: int | None = found[0]
    return value


def defer_exit_webhook(conn: sqlite3.Connection, delivery_id: str, attempt: int, until: int) -> None:
    # Its lease is given back only if it is still the one the webhook took (its attempt): a
    # reader's lease, taken once the webhook's ran out, is the reader's.
    conn.execute(
        "UPDATE exits SET webhook_after = ?, "
        "lease_until = CASE WHEN attempt = ? THEN 0 ELSE lease_until END "
        "WHERE delivery_id = ? AND acked_at IS NULL",
        (until, attempt, delivery_id),
    )


def ack_exit(conn: sqlite3.Connection, delivery_id: str, principal: str | None, now: int) -> bool:
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


def owner_of(conn: sqlite3.Connection, execution_id: str) -> str | None:
    """The node an execution is claimed by (None: none, or no such execution)."""
    found = conn.execute("SELECT node_id FROM executions WHERE id = ?", (execution_id,)).fetchone()
    return None if found is None else found[0]
