"""Capture keeps its bounds against what a process controls: counters, progress lines, numbers."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
import trio

from tests.conftest import DaemonHandle


async def test_counters_past_the_budget_catch_up_without_another_write(make_daemon: Any) -> None:
    """Promise 1: the record's byte counts reach what the spool file holds, on a timer, even
    when the last write came right after a flush and nothing follows it."""
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=10_000)
    started = await wb.start("head -c 30000 /dev/zero; sleep 0.05; printf x; sleep 30")
    eid = started["executionId"]
    record: dict[str, Any] = {}
    with trio.move_on_after(5):
        while True:
            record = (await wb.client.get(f"/v1/executions/{eid}")).json()
            if record["output"]["stdoutBytes"] == 30_001:
                break
            await trio.sleep(0.05)
    await wb.client.post(f"/v1/executions/{eid}/cancel", json={})
    assert record["output"]["stdoutBytes"] == 30_001, record["output"]


async def test_a_flood_of_progress_lines_is_coalesced_and_the_last_is_kept(wb: DaemonHandle) -> None:
    """Progress has a budget of its own: a few events a second, the latest wins, the last is kept."""
    command = 'for i in $(seq 1 20000); do echo "$i/20000 step" >> "$WORKBENCH_PROGRESS"; done'
    record = await wb.run(command)
    assert record["status"] == "completed"
    events = await wb.events(record["executionId"])
    progress = [e for e in events if e["eventType"] == "progress"]
    assert 1 <= len(progress) <= 200, len(progress)
    assert (progress[-1]["progress"], progress[-1]["total"], progress[-1]["message"]) == (
        20000,
        20000,
        "step",
    )
    done = [e["progress"] for e in progress]
    assert done == sorted(done)


async def test_progress_numbers_a_process_makes_up_never_break_supervision_or_json(wb: DaemonHandle) -> None:
    """A 5,000-digit number and one that overflows a float are not progress; the run goes on."""
    huge = "9" * 5000
    command = (
        f'echo "{huge}/10" >> "$WORKBENCH_PROGRESS"; echo "{"9" * 400}.5/10" >> "$WORKBENCH_PROGRESS"; '
        'echo "1/2 fine" >> "$WORKBENCH_PROGRESS"; sleep 0.3; echo done'
    )
    record = await wb.run(command)
    assert record["status"] == "completed" and record["exitCode"] == 0, record
    response = await wb.client.get(f"/v1/executions/{record['executionId']}/events")
    json.loads(response.text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    progress = [e for e in response.json()["events"] if e["eventType"] == "progress"]
    assert [(e["progress"], e["total"]) for e in progress] == [(1, 2)]


@pytest.mark.sqlite_only
async def test_output_is_stored_as_bytes_not_as_escaped_json(wb: DaemonHandle) -> None:
    """The store keeps about one byte per byte of journaled output, binary or text; reads render
    the same JSON as ever (a NUL is `\\u0000` on the wire)."""
    record = await wb.run("head -c 3000000 /dev/zero; head -c 1000000 /dev/urandom | base64 -w 0")
    assert record["status"] == "completed"
    events = await wb.events(record["executionId"])
    text = "".join(e["outputDelta"] or "" for e in events if e["eventType"] == "output")
    assert text.startswith("\0" * 3_000_000) and len(text) == record["output"]["eventBytes"]
    with sqlite3.connect(wb.data_dir / "workbench.db") as db:
        stored = db.execute(
            "SELECT sum(length(CAST(body AS BLOB))) + sum(coalesce(length(data), 0)) FROM events "
            "WHERE execution_id = ?",
            (record["executionId"],),
        ).fetchone()[0]
    assert stored <= 1.2 * record["output"]["eventBytes"], (stored, record["output"])
