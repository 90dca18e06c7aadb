"""`failFast`: once an item ends without completing, no item of its batch starts any more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from tests.conftest import DaemonHandle
from tests.e2e.test_batches import start_batch


def touching(tmp_path: Path, indexes: range) -> list[dict[str, Any]]:
    return [{"kind": "workbench_bash", "command": f"touch {tmp_path / f'ran-{i}'}"} for i in indexes]


def ran(tmp_path: Path) -> list[str]:
    """The items that ran, as the files they made say."""
    return sorted(p.name for p in tmp_path.glob("ran-*"))


async def items_of(wb: DaemonHandle, final: dict[str, Any]) -> list[dict[str, Any]]:
    listed = await wb.client.get("/v1/executions", params={"batchId": final["executionId"], "limit": 1000})
    by_id = {r["executionId"]: r for r in listed.json()["executions"]}
    return [by_id[i["executionId"]] for i in final["items"]]


async def test_one_at_a_time_nothing_after_the_failing_item_runs(wb: DaemonHandle, tmp_path: Path) -> None:
    """The failing item's slot does not go to the next item: every later item ends `cancelled`
    without ever starting."""
    items = [{"kind": "workbench_bash", "command": "exit 3"}, *touching(tmp_path, range(1, 6))]
    batch = await start_batch(wb, {"items": items, "concurrency": 1, "failFast": True})
    with trio.fail_after(60):
        final = await wb.wait(batch["executionId"])
    assert ran(tmp_path) == []
    assert final["status"] == "failed" and final["error"]["code"] == "fail_fast"
    ended = [(i["status"], i["exitCode"]) for i in final["items"]]
    assert ended == [("failed", 3)] + [("cancelled", None)] * 5
    records = await items_of(wb, final)
    for record in records[1:]:
        assert record["startedAt"] is None and record["signal"] is None, record
        assert "failFast" in record["cancelReason"], record
    assert "5 cancelled" in final["error"]["message"], final["error"]
    journal = await wb.events(batch["executionId"])
    items = [e["item"] for e in journal if e["eventType"] == "item"]
    running = [i["executionId"] for i in items if i["status"] == "running"]
    assert running == [final["items"][0]["executionId"]]


async def test_four_at_a_time_the_running_ones_are_cancelled_and_no_other_starts(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """The items running when one fails are cancelled (killed); none of the 196 waiting starts."""
    items = [{"kind": "workbench_bash", "command": "sleep 0.5; exit 1"}]
    items += [{"kind": "workbench_bash", "command": "sleep 300"}] * 3
    items += touching(tmp_path, range(4, 200))
    batch = await start_batch(wb, {"items": items, "concurrency": 4, "failFast": True})
    with trio.fail_after(60):
        final = await wb.wait(batch["executionId"], 120_000)
    assert ran(tmp_path) == []
    assert final["status"] == "failed" and final["error"]["code"] == "fail_fast"
    assert (final["items"][0]["status"], final["items"][0]["exitCode"]) == ("failed", 1)
    records = await items_of(wb, final)
    for record in records[1:4]:
        assert record["status"] == "cancelled" and record["startedAt"] is not None, record
        assert record["signal"] is not None and record["exitCode"] is None, record
    for record in records[4:]:
        assert (record["status"], record["startedAt"], record["exitCode"]) == ("cancelled", None, None)
    assert "199 cancelled" in final["error"]["message"], final["error"]


async def test_an_item_completed_before_the_failure_stays_completed(wb: DaemonHandle, tmp_path: Path) -> None:
    """The batch's message counts the other items as they ended: here one completed first."""
    items = [{"kind": "workbench_bash", "command": "true"}, {"kind": "workbench_bash", "command": "exit 2"}]
    items += touching(tmp_path, range(2, 5))
    batch = await start_batch(wb, {"items": items, "concurrency": 1, "failFast": True})
    final = await wb.wait(batch["executionId"])
    assert [i["status"] for i in final["items"]] == ["completed", "failed"] + ["cancelled"] * 3
    assert ran(tmp_path) == []
    message = final["error"]["message"]
    assert "3 cancelled" in message and "1 completed" in message, message
