"""A terminal status with the output read last (`before`): one transaction, or nothing at all.

Issue 20 ("Hot path"): a short command's last output and its end cost one commit, not two. The
events come before the status event, so the terminal status event stays the last (promise 2),
and a refused end writes none of them (promise 4: terminal is final)."""

from __future__ import annotations

import json
from typing import Any

import trio

from tests.core.store.test_sqlite import row
from workbench.core.journal import Journal
from workbench.core.records import event_builder
from workbench.core.store.sqlite import SQLiteStore
from workbench.wire.status import ExecutionStatus as S


def _output(text: str) -> list[tuple[str, Any]]:
    return [("output", event_builder("output", stream="stdout", output_delta=text))]


async def _kinds(db: Any, execution_id: str) -> list[tuple[str, str]]:
    events = (await db.read_events(execution_id, 0, 100)).events
    out = []
    for e in events:
        body = json.loads(e.body)
        out.append((e.event_type, body["outputDelta"] if e.event_type == "output" else body["status"]))
    return out


async def output_and_end_share_one_commit(db: Any) -> None:
    """The held output, then the terminal status: one commit, in that order; `db`: either engine."""
    journal = Journal(db)
    await db.create_execution(row("ex_e1", status="running"), event_builder("status"))
    before = db.commits
    with trio.fail_after(10):
        sequence = await journal.transition(
            "ex_e1", S.COMPLETED, exit_code=0, before=[*_output("one\n"), *_output("two\n")]
        )
    assert sequence == 4
    assert db.commits == before + 1
    assert await _kinds(db, "ex_e1") == [
        ("status", "running"),
        ("output", "one\n"),
        ("output", "two\n"),
        ("status", "completed"),
    ]
    found = await db.get_execution("ex_e1")
    assert found is not None and found.row.last_sequence == 4


async def a_refused_end_writes_none_of_its_output(db: Any) -> None:
    """An end refused (the execution is terminal already, or another node's) writes nothing of
    what was held for it, and the store goes on; `db`: either engine."""
    journal = Journal(db)
    await db.create_execution(row("ex_e2", status="running"), event_builder("status"))
    await db.create_execution(row("ex_e3", status="running", node_id="b"), event_builder("status"))
    await db.create_execution(row("ex_e4", status="running"), event_builder("status"))
    with trio.fail_after(10):
        assert await journal.transition("ex_e2", S.FAILED) == 2
        assert await journal.transition("ex_e2", S.COMPLETED, before=_output("late\n")) is None
        held = _output("not mine\n")
        assert await journal.transition("ex_e3", S.COMPLETED, before=held, owner="a") is None
        # The store goes on: the next end with its output is written whole.
        assert await journal.transition("ex_e4", S.COMPLETED, before=_output("mine\n")) == 3
    assert await _kinds(db, "ex_e2") == [("status", "running"), ("status", "failed")]
    assert await _kinds(db, "ex_e3") == [("status", "running")]
    assert await _kinds(db, "ex_e4") == [("status", "running"), ("output", "mine\n"), ("status", "completed")]


async def test_output_and_end_share_one_commit(db: SQLiteStore) -> None:
    await output_and_end_share_one_commit(db)


async def test_a_refused_end_writes_none_of_its_output(db: SQLiteStore) -> None:
    await a_refused_end_writes_none_of_its_output(db)


async def a_refusal_for_its_status_does_not_disown(db: Any) -> None:
    """A node's transition refused only because the execution moved on (another node recorded a
    cancel meanwhile) leaves the execution that node's: its output and its end are still written
    (a refusal for its owner disowns it: `a_claim_taken_meanwhile_disowns`); `db`: either engine."""
    journal = Journal(db)
    await db.create_execution(row("ex_e5", status="cancel_requested", node_id="a"), event_builder("status"))
    with trio.fail_after(10):
        # Its owner, told of the cancel, asks for it again: refused, it is so already.
        assert await journal.transition("ex_e5", S.CANCEL_REQUESTED, owner="a") is None
        assert await journal.append("ex_e5", _output("bye\n")) == 2
        ended = await journal.transition("ex_e5", S.CANCELLED, before=_output("last\n"), owner="a")
    assert ended == 4
    assert await _kinds(db, "ex_e5") == [
        ("status", "cancel_requested"),
        ("output", "bye\n"),
        ("output", "last\n"),
        ("status", "cancelled"),
    ]


async def test_a_refusal_for_its_status_does_not_disown(db: SQLiteStore) -> None:
    await a_refusal_for_its_status_does_not_disown(db)
