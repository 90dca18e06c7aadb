"""The SQLite engine and the journal on a disk that fills up: a failed commit fails its batch, never
the store; the journal tries again, so output and outcomes are kept once space is back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.core.store.test_sqlite import row
from tests.disks import Disk, small_disk
from workbench.core.journal import Journal
from workbench.core.records import event_builder
from workbench.core.store import sqlite_schema as schema
from workbench.core.store.health import State
from workbench.core.store.sqlite import SQLiteStore
from workbench.wire.errors import StorageFull
from workbench.wire.status import ExecutionStatus as S


@pytest.fixture
async def disk(tmp_path: Path) -> AsyncIterator[Disk]:
    with small_disk(tmp_path / "disk", "4m") as handle:
        yield handle


@pytest.fixture
async def db(disk: Disk) -> AsyncIterator[SQLiteStore]:
    path = disk.mount / "workbench.db"
    schema.prepare(path)
    store = SQLiteStore(path)
    store.start()
    yield store
    disk.free()
    await store.aclose()


def output(text: str) -> list[tuple[str, Any]]:
    return [("output", event_builder("output", stream="stdout", output_delta=text))]


async def events_of(store: SQLiteStore, execution_id: str) -> list[dict[str, Any]]:
    read = await store.read_events(execution_id, 0, 10_000)
    return [json.loads(e.body) for e in read.events]


async def test_a_full_disk_fails_each_write_of_the_batch_and_never_the_store(
    disk: Disk, db: SQLiteStore
) -> None:
    """SQLITE_FULL rolls the whole transaction back itself: every job of the batch is told
    `StorageFull` (not "no such savepoint"), nothing of them is written, and once space is freed
    the same store commits again, with no restart."""
    await db.create_execution(row("ex_a"), event_builder("status"))
    disk.fill()
    big = "x" * 200_000  # more than SQLite could keep in pages it already holds
    # Submitted together, so that they share one transaction.
    pending = [
        db.begin_transition("ex_a", S.RUNNING, [S.QUEUED], {}, event_builder("status")),
        db.begin_transition("ex_a", S.COMPLETED, [S.RUNNING], {}, event_builder("status")),
    ]
    appended = db.append_events("ex_a", output(big), {})
    with pytest.raises(StorageFull):
        await appended
    for each in pending:
        with pytest.raises(StorageFull, match="full"):
            await each.result()
    with pytest.raises(StorageFull):
        await db.create_execution(row("ex_b", command=big), event_builder("status"))
    assert db.health.state is State.FULL
    found = await db.get_execution("ex_a")
    assert found is not None and found.row.status is S.QUEUED and found.row.last_sequence == 1
    assert await db.get_execution("ex_b") is None

    disk.free()
    await db.probe()
    await db.create_execution(row("ex_b"), event_builder("status"))
    assert await db.append_events("ex_a", output("after"), {}) == 2
    events = await events_of(db, "ex_a")
    assert [e["sequence"] for e in events] == [1, 2] and events[1]["outputDelta"] == "after"


async def test_the_journal_keeps_output_and_outcome_until_space_is_back(disk: Disk, db: SQLiteStore) -> None:
    """Promises 1 and 2: an append and a terminal transition that cannot commit are tried again
    until they do, each exactly once; the `running` step that failed meanwhile is written again
    before the outcome, so the journal reads queued, output, running, completed."""
    journal = Journal(db)
    await journal.create(row("ex_a"))
    disk.fill()
    big = "y" * 200_000
    journal.begin_transition("ex_a", S.RUNNING, fields={"started_at": 1})  # fails: not awaited
    done: list[int | None] = []
    ended = trio.Event()

    async def run_to_the_end() -> None:
        done.append(await journal.append("ex_a", output(big)))
        with trio.CancelScope(shield=True):
            done.append(await journal.transition("ex_a", S.COMPLETED, fields={"exit_code": 0}))
        ended.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_to_the_end)
        await trio.sleep(1)
        assert done == [], "nothing commits while the disk is full"
        disk.free()
        with trio.fail_after(30):
            await ended.wait()
    assert done == [2, 4]
    events = await events_of(db, "ex_a")
    assert [e["sequence"] for e in events] == [1, 2, 3, 4]
    assert [(e["eventType"], e["status"]) for e in events] == [
        ("status", "queued"),
        ("output", "queued"),
        ("status", "running"),
        ("status", "completed"),
    ]
    assert events[1]["outputDelta"] == big
    found = await db.get_execution("ex_a")
    assert found is not None and found.row.status is S.COMPLETED and found.row.exit_code == 0


async def test_once_the_daemon_stops_the_journal_gives_up(disk: Disk, db: SQLiteStore) -> None:
    """A stop on a full disk is not held forever: what waits for room gives up (the next start
    recovers the execution from the journal and the sandbox's status file)."""
    journal = Journal(db)
    await journal.create(row("ex_a"))
    disk.fill()
    result: list[int | None] = []
    ended = trio.Event()

    async def finish() -> None:
        with trio.CancelScope(shield=True):
            result.append(await journal.transition("ex_a", S.CANCELLED))
        ended.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(finish)
        await trio.sleep(0.5)
        journal.stopping.set()
        with trio.fail_after(30):
            await ended.wait()
    assert result == [None]
