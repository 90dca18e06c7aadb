"""The PostgreSQL engine on a real server: its writer's group commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
from psycopg.conninfo import conninfo_to_dict

from tests import pg
from tests.core.store.test_end_events import (
    a_refusal_for_its_status_does_not_disown,
    a_refused_end_writes_none_of_its_output,
    output_and_end_share_one_commit,
)
from tests.core.store.test_sqlite import (
    a_claim_taken_meanwhile_disowns,
    flags_set_as_booleans_are_kept,
    row,
    running_and_end_share_one_commit,
)
from workbench.core.journal import Journal
from workbench.core.records import event_builder
from workbench.core.store.postgres import PostgresStore
from workbench.core.store.postgres_schema import node_url
from workbench.wire.status import ExecutionStatus as S


@pytest.fixture
async def db(postgres_server: pg.PostgresServer, tmp_path: Path) -> AsyncIterator[PostgresStore]:
    url = await trio.to_thread.run_sync(postgres_server.url_for, tmp_path)
    await trio.to_thread.run_sync(PostgresStore.prepare, url)
    handle = PostgresStore(url, linger_s=5.0)  # long enough for these tests on any machine
    handle.start()
    yield handle
    await handle.aclose()


async def test_a_lazy_running_and_the_end_after_it_share_one_commit(db: PostgresStore) -> None:
    """Issue 20 and 22: a short command's `running` (not awaited) and its end cost one commit on
    PostgreSQL too, as on SQLite."""
    await running_and_end_share_one_commit(db)


async def test_a_write_that_is_awaited_does_not_linger(db: PostgresStore) -> None:
    journal = Journal(db)
    await db.create_execution(row("ex_5"), event_builder("status"))
    before = db.commits
    with trio.fail_after(2):
        assert await journal.transition("ex_5", S.RUNNING) == 2
    assert db.commits == before + 1


async def test_a_claim_taken_meanwhile_disowns(db: PostgresStore) -> None:
    """Issue 22: a node cut off past its lease writes nothing into the run of the node that
    took its claim."""
    await a_claim_taken_meanwhile_disowns(db)


async def test_flags_set_as_booleans_are_kept(db: PostgresStore) -> None:
    """Issue 22: a pipe's end of file (`stdin_closed`) is recorded on PostgreSQL too."""
    await flags_set_as_booleans_are_kept(db)


def test_each_node_of_each_store_names_its_sessions_apart() -> None:
    """`node_url`: the session name a restart looks for (`fence`) is the node's on that store."""
    base = "postgresql://wb@db:5432/jobs"
    one = "postgresql://wb@db:5432/jobs?options=-csearch_path%3Done"
    names = {
        str(conninfo_to_dict(node_url(url, node))["application_name"])
        for url in (base, one, "postgresql://wb@db:5432/other")
        for node in ("a", "b", "n" * 63)
    }
    assert len(names) == 9
    assert all(len(name) <= 63 and name.startswith("workbench ") for name in names)
    # The same node of the same store: the same name at every start.
    assert node_url(one, "a") == node_url(one, "a")


async def test_output_and_end_share_one_commit(db: PostgresStore) -> None:
    """Issue 20: a short command's last output and its end cost one commit on PostgreSQL too."""
    await output_and_end_share_one_commit(db)


async def test_a_refused_end_writes_none_of_its_output(db: PostgresStore) -> None:
    await a_refused_end_writes_none_of_its_output(db)


async def test_a_refusal_for_its_status_does_not_disown(db: PostgresStore) -> None:
    """A cross-node cancel: the owner's own cancel_requested is refused (it is so already), and
    its tree's last output and its end are still written, not refused as if disowned."""
    await a_refusal_for_its_status_does_not_disown(db)
