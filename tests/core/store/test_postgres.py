"""The PostgreSQL engine on a real server: its writer's group commit."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from tests import pg
from tests.core.store.test_sqlite import row
from workbench.core.journal import Journal
from workbench.core.records import event_builder
from workbench.core.store.postgres import PostgresStore
from workbench.wire.status import ExecutionStatus as S


@pytest.fixture
async def db(postgres_server: pg.PostgresServer, tmp_path: Path) -> AsyncIterator[PostgresStore]:
    url = await trio.to_thread.run_sync(postgres_server.url_for, tmp_path)
    await trio.to_thread.run_sync(PostgresStore.prepare, url)
    handle = PostgresStore(url, linger_s=5.0)  # long enough for these tests on any machine
    handle.start()
    yield handle
    await handle.aclose()


def _taken_by_the_writer(db: PostgresStore) -> None:
    while not db._writes.empty():
        time.sleep(0.001)


async def test_a_lazy_running_and_the_end_after_it_share_one_commit(db: PostgresStore) -> None:
    """Issue 20 and 22: a short command's `running` (not awaited) and its end cost one commit on
    PostgreSQL too, as on SQLite."""
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


async def test_a_write_that_is_awaited_does_not_linger(db: PostgresStore) -> None:
    journal = Journal(db)
    await db.create_execution(row("ex_5"), event_builder("status"))
    before = db.commits
    with trio.fail_after(2):
        assert await journal.transition("ex_5", S.RUNNING) == 2
    assert db.commits == before + 1
