"""Schema 4 (batches, usage, versions, reruns, secret names): the executions table made again
keeps every row of version 3 (its previews too) and everything that refers to them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from workbench.core.store import sqlite_queries as q
from workbench.core.store import sqlite_schema as schema
from workbench.wire.errors import Unavailable


def at_version_3(path: Path) -> None:
    conn = sqlite3.connect(path)
    for number, _name, sql in schema.migrations():
        if number <= 3:
            conn.executescript(sql)
            conn.execute(f"PRAGMA user_version = {number}")
    conn.executescript(
        """
        INSERT INTO executions (id, kind, principal, session_id, status, command, cwd, image,
            created_at, deadline_at, timeout_ms, budget_bytes, last_sequence, detached, exit_code,
            preview_bytes, preview_format, preview_json)
        VALUES ('ex_01JD0000000000000000000001', 'workbench_bash', 'admin', 'default', 'completed',
            'echo hi', '/', 'host', 1, 2, 1, 100, 3, 1, 0, 512, 'plain', '{"stdout": "hi"}');
        INSERT INTO events (execution_id, sequence, event_type, body, data) VALUES
            ('ex_01JD0000000000000000000001', 1, 'status', '{}', NULL),
            ('ex_01JD0000000000000000000001', 2, 'output', '{}', x'68690a'),
            ('ex_01JD0000000000000000000001', 3, 'status', '{}', NULL);
        INSERT INTO artifacts (execution_id, name, size_bytes, sha256, content_type, created_at)
            VALUES ('ex_01JD0000000000000000000001', 'stdout', 3, 'abc', 'application/octet-stream', 1);
        """
    )
    conn.commit()
    conn.close()


def test_version_3_rows_events_and_artifacts_survive_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    at_version_3(path)
    schema.prepare(path)
    conn = schema.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    row = q.get_execution(conn, "ex_01JD0000000000000000000001")
    assert row is not None and (row.command, row.exit_code, row.detached) == ("echo hi", 0, True)
    assert (row.row_version, row.batch_id, row.rerun_of, row.cpu_user_ms) == (1, None, None, None)
    assert (row.preview_bytes, row.preview_format, row.preview_json) == (512, "plain", '{"stdout": "hi"}')
    events = conn.execute("SELECT sequence, data FROM events ORDER BY sequence").fetchall()
    assert [(e[0], e[1]) for e in events] == [(1, None), (2, b"hi\n"), (3, None)]
    assert [a.name for a in q.list_artifacts(conn, row.id)] == ["stdout"]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    # The references still hold: deleting the execution takes its events and artifacts with it.
    conn.execute("DELETE FROM executions WHERE id = ?", (row.id,))
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM artifacts").fetchone()[0] == 0
    # Batches and partial_failed are values the table now takes.
    conn.execute(
        "INSERT INTO executions (id, kind, principal, session_id, status, cwd, image, created_at, "
        "deadline_at, timeout_ms, budget_bytes) VALUES ('ex_01JD0000000000000000000002', 'batch', "
        "'admin', 'default', 'partial_failed', '', '', 1, 2, 1, 0)"
    )
    conn.close()


async def test_a_batch_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """One transaction: an item that cannot be inserted leaves no batch, no item, no event."""
    import pytest

    from tests.core.store.test_sqlite import row
    from workbench.core.journal import Journal
    from workbench.core.store.sqlite import SQLiteStore

    path = tmp_path / "workbench.db"
    schema.prepare(path)
    store = SQLiteStore(path)
    store.start()
    try:
        journal = Journal(store)
        taken = row("ex_01JD0000000000000000000009")
        assert (await journal.create(taken))[1]
        batch = row("ex_01JD0000000000000000000010", kind="batch", cwd="", image="", concurrency=2)
        items = [
            row("ex_01JD0000000000000000000011", batch_id=batch.id),
            row("ex_01JD0000000000000000000009", batch_id=batch.id),  # an id that is taken
        ]
        with pytest.raises(Unavailable, match="UNIQUE"):
            await journal.create_batch(batch, items)
        assert await store.get_execution(batch.id) is None
        assert await store.get_execution(items[0].id) is None
        good = [
            row("ex_01JD0000000000000000000012", batch_id=batch.id),
            row("ex_01JD0000000000000000000013", batch_id=batch.id),
        ]
        _, made = await journal.create_batch(batch, good)
        assert made
        found = await store.get_execution(batch.id)
        assert (
            found is not None
            and found.items is not None
            and [i.id for i in found.items] == [r.id for r in good]
        )
        read = await store.read_events(batch.id, 0, 10)
        assert [(e.sequence, e.event_type) for e in read.events] == [(1, "status"), (2, "item"), (3, "item")]
        assert read.row is not None and read.row.last_sequence == 3
    finally:
        await store.aclose()
