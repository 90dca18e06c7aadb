"""The store and the journal on a real SQLite file: migrations, group commit, guarded transitions."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from workbench.core.journal import Journal
from workbench.core.records import event_builder, now_ms
from workbench.core.store import ExecutionRow, Store
from workbench.core.store import sqlite_queries as q
from workbench.core.store import sqlite_schema as schema
from workbench.core.store.sqlite import SQLiteStore
from workbench.wire.errors import ConfigError
from workbench.wire.status import ExecutionStatus as S


def row(execution_id: str, **extra: Any) -> ExecutionRow:
    now = now_ms()
    values = {
        "id": execution_id,
        "kind": "workbench_bash",
        "principal": "admin",
        "session_id": "default",
        "status": "queued",
        "command": "true",
        "cwd": "/",
        "image": "host",
        "created_at": now,
        "deadline_at": now + 1000,
        "timeout_ms": 1000,
        "budget_bytes": 100,
    }
    values.update(extra)
    return ExecutionRow.from_mapping(values)


def test_an_empty_file_is_migrated_to_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    schema.prepare(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"executions", "events", "artifacts", "exits"} <= tables
    conn.close()
    schema.prepare(path)  # preparing again changes nothing


def test_every_older_version_migrates(tmp_path: Path) -> None:
    """From each older schema version (0 = empty), prepare() reaches the current one."""
    for start in range(schema.SCHEMA_VERSION):
        path = tmp_path / f"v{start}.db"
        conn = sqlite3.connect(path)
        for number, _name, sql in schema.migrations():
            if number <= start:
                conn.executescript(sql)
                conn.execute(f"PRAGMA user_version = {number}")
        conn.close()
        schema.prepare(path)
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        conn.close()


def test_migration_files_are_numbered_without_gaps() -> None:
    assert [n for n, _, _ in schema.migrations()] == list(range(1, schema.SCHEMA_VERSION + 1))


def test_a_newer_or_damaged_store_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    schema.prepare(newer)
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(ConfigError, match="newer than this Workbench"):
        schema.prepare(newer)
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ConfigError, match=r"damaged|cannot be opened"):
        schema.prepare(damaged)


async def test_a_failing_job_does_not_undo_the_others_in_its_batch(db: SQLiteStore) -> None:
    def insert(execution_id: str) -> Any:
        return lambda conn: q.insert_execution(conn, row(execution_id), event_builder("status"))

    def boom(conn: sqlite3.Connection) -> None:
        q.insert_execution(conn, row("ex_B"), event_builder("status"))
        raise RuntimeError("boom")

    # The engine's own mechanism: each job of a batch in its own savepoint.
    pending = [db._submit(insert("ex_A")), db._submit(boom), db._submit(insert("ex_C"))]
    await pending[0].result()
    with pytest.raises(RuntimeError, match="boom"):
        await pending[1].result()
    await pending[2].result()
    ids = [r.id for r in await db.live_executions()]
    assert ids == ["ex_A", "ex_C"]


async def test_transitions_are_guarded_and_terminal_is_final(db: Store) -> None:
    """Promise 4: a late exit cannot turn `cancelled` into `completed`."""
    journal = Journal(db)
    await db.create_execution(row("ex_1"), event_builder("status"))
    assert await journal.transition("ex_1", S.RUNNING) == 2
    assert await journal.transition("ex_1", S.CANCEL_REQUESTED, message="asked") == 3
    assert await journal.transition("ex_1", S.CANCELLED) == 4
    assert await journal.transition("ex_1", S.COMPLETED) is None
    assert await journal.transition("ex_1", S.RUNNING) is None
    assert (
        await journal.append("ex_1", [("output", event_builder("output", stream="stdout", output_delta="x"))])
        is None
    )
    events = (await db.read_events("ex_1", 0, 100)).events
    assert [(e.sequence, json.loads(e.body)["status"]) for e in events] == [
        (1, "queued"),
        (2, "running"),
        (3, "cancel_requested"),
        (4, "cancelled"),
    ]
    record = (await db.read_events("ex_1", 0, 0)).row
    assert record is not None and record.status is S.CANCELLED and record.last_sequence == 4


async def test_appends_are_gapless_and_wake_watchers_only_after_commit(db: Store) -> None:
    """Promise 2: sequences grow by one; a watcher wakes when the commit is done."""
    journal = Journal(db)
    await db.create_execution(row("ex_2", status="running"), event_builder("status"))
    with journal.watch("ex_2") as watch:
        seen = watch.version
        woken: list[int] = []

        async def waiter() -> None:
            await watch.wait_changed(seen)
            found = (await db.read_events("ex_2", 0, 100)).events
            woken.append(len(found))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.sleep(0.01)
            builders = [
                ("output", event_builder("output", stream="stdout", output_delta=str(i))) for i in range(5)
            ]
            assert await journal.append("ex_2", builders, {"stdout_offset": 5}) == 6
        assert woken == [6], "the waiter saw every event of the commit that woke it"
    events = (await db.read_events("ex_2", 0, 100)).events
    assert [e.sequence for e in events] == list(range(1, 7))
    record = (await db.read_events("ex_2", 0, 0)).row
    assert record is not None and record.stdout_offset == 5


async def test_many_concurrent_writes_share_commits(db: Store) -> None:
    """Group commit: a flood of small writes all land, in submission order."""
    journal = Journal(db)
    await db.create_execution(row("ex_3", status="running"), event_builder("status"))
    async with trio.open_nursery() as nursery:
        for i in range(300):
            nursery.start_soon(
                journal.append,
                "ex_3",
                [("output", event_builder("output", stream="stdout", output_delta=str(i)))],
            )
    events = (await db.read_events("ex_3", 0, 1000)).events
    assert [e.sequence for e in events] == list(range(1, 302))


def _taken_by_the_writer(db: Any) -> None:
    while not db._writes.empty():
        time.sleep(0.001)


async def running_and_end_share_one_commit(db: Any) -> None:
    """A lazy `running` (not awaited) and the terminal status after it commit once; `db`: a
    started store of either engine whose writer lingers longer than this takes."""
    journal = Journal(db)
    await db.create_execution(row("ex_4"), event_builder("status"))
    before = db.commits
    running = journal.begin_transition("ex_4", S.RUNNING, lazy=True)
    await trio.to_thread.run_sync(_taken_by_the_writer, db)  # which waits for company
    ended = journal.begin_transition("ex_4", S.COMPLETED, exit_code=0)
    assert (await running.result(), await ended.result()) == (2, 3)
    assert db.commits == before + 1
    events = (await db.read_events("ex_4", 0, 100)).events
    assert [json.loads(e.body)["status"] for e in events] == ["queued", "running", "completed"]


async def a_claim_taken_meanwhile_disowns(db: Any) -> None:
    """A `running` asked for with an owner that no longer holds the claim is refused, and the
    store then writes none of that execution's events or ends for it; `db`: either engine."""
    journal = Journal(db)
    await db.create_execution(row("ex_6", node_id="b"), event_builder("status"))
    output = [("output", event_builder("output", stream="stdout", output_delta="late\n"))]
    with trio.fail_after(10):
        assert await journal.begin_transition("ex_6", S.RUNNING, lazy=True, owner="a").result() is None
        assert await journal.append("ex_6", output) is None
        assert await journal.transition("ex_6", S.COMPLETED, exit_code=0, owner="a") is None
        # The claim's holder runs it as ever, and the other's late writes stay refused.
        assert await journal.transition("ex_6", S.RUNNING, owner="b") == 2
        assert await db.append_events("ex_6", output, {}) is None, "disowned here: never written"
    found = await db.get_execution("ex_6")
    assert found is not None and found.row.status is S.RUNNING
    events = (await db.read_events("ex_6", 0, 100)).events
    assert [e.event_type for e in events] == ["status", "status"]


async def flags_set_as_booleans_are_kept(db: Any) -> None:
    """A yes/no column set from a Python bool, by an append or a transition, reads back as one
    (on PostgreSQL such a column is an integer, which refuses a boolean); `db`: either engine."""
    journal = Journal(db)
    await db.create_execution(row("ex_7", status="running"), event_builder("status"))
    with trio.fail_after(10):
        await journal.append("ex_7", [], {"stdin_closed": True})  # fields only: no event
        assert await journal.transition("ex_7", S.COMPLETED, fields={"truncated": True}) == 2
    found = await db.get_execution("ex_7")
    assert found is not None and found.row.stdin_closed is True and found.row.truncated is True


async def test_flags_set_as_booleans_are_kept(db: SQLiteStore) -> None:
    await flags_set_as_booleans_are_kept(db)


async def test_a_claim_taken_meanwhile_disowns(db: SQLiteStore) -> None:
    await a_claim_taken_meanwhile_disowns(db)


async def test_a_lazy_running_and_the_end_after_it_share_one_commit(tmp_path: Path) -> None:
    """Issue 20: a short command's `running` (not awaited) and its terminal status cost one fsync."""
    path = tmp_path / "workbench.db"
    schema.prepare(path)
    db = SQLiteStore(path, linger_s=5.0)  # long enough for this test on any machine
    db.start()
    try:
        await running_and_end_share_one_commit(db)
    finally:
        await db.aclose()


async def test_a_lazy_write_alone_still_commits_at_once_or_nearly(db: SQLiteStore) -> None:
    journal = Journal(db)
    await db.create_execution(row("ex_5"), event_builder("status"))
    before = db.commits
    with trio.fail_after(2):
        assert await journal.begin_transition("ex_5", S.RUNNING, lazy=True).result() == 2
    assert db.commits == before + 1
    # A write that is awaited does not linger: it commits with whatever waits, or alone.
    with trio.fail_after(2):
        assert await journal.transition("ex_5", S.COMPLETED) == 3


def test_a_store_made_without_incremental_vacuum_is_rewritten_with_it(tmp_path: Path) -> None:
    """An older store (auto_vacuum NONE) is switched once at start, and keeps what it holds."""
    from workbench.core.store.sqlite_schema import prepare

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE kept (x)")
    conn.execute("INSERT INTO kept VALUES ('here')")
    conn.commit()
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    conn.close()
    prepare(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert conn.execute("SELECT x FROM kept").fetchall() == [("here",)]
        assert conn.execute("SELECT COUNT(*) FROM executions").fetchone()[0] == 0
    finally:
        conn.close()


async def test_the_claim_watcher_lets_go_when_cancelled_before_the_commit(tmp_path: Path) -> None:
    """A short command's end must not wait on its lazy `running`: the runner's claim watcher is
    cancelled when the tree is dead, before the terminal status is written, so it must not hold
    its nursery open until that `running` commits (it lingers for company that comes after)."""
    from workbench.core.runner import watch_claim

    path = tmp_path / "workbench.db"
    schema.prepare(path)
    db = SQLiteStore(path, linger_s=5.0)  # long enough for this test on any machine
    db.start()
    lost: list[bool] = []
    try:
        journal = Journal(db)
        await db.create_execution(row("ex_7"), event_builder("status"))
        claim = journal.begin_transition("ex_7", S.RUNNING, lazy=True, owner=None)
        before = db.commits
        with trio.fail_after(10):
            async with trio.open_nursery() as watchers:
                watchers.start_soon(watch_claim, claim, lambda: lost.append(True))
                await trio.sleep(0.05)
                watchers.cancel_scope.cancel()
            assert db.commits == before, "the watcher held on until the lingering commit"
            # The end comes now and shares the lingering commit.
            assert await journal.transition("ex_7", S.COMPLETED, exit_code=0) == 3
        assert await claim.result() == 2
        assert db.commits == before + 1
        assert lost == []
    finally:
        await db.aclose()
