"""Batches: many executions accepted as one (all or none), followed to one outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from tests import procs
from tests.conftest import DaemonHandle

BATCH = "/v1/executions/batch"
#: Items 17, 99 and 163 fail; a quarter of the items are code, the rest bash.
FAILING = {17: 3, 99: 4, 163: 5}


def mixed_items(count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(count):
        if i in FAILING:
            items.append({"kind": "workbench_bash", "command": f"echo {i}; exit {FAILING[i]}"})
        elif i % 4 == 3:
            items.append({"kind": "workbench_code", "language": "sh", "code": f"echo code {i}"})
        else:
            items.append({"kind": "workbench_bash", "command": f"echo {i}", "metadata": {"i": i}})
    return items


async def start_batch(wb: DaemonHandle, body: dict[str, Any], **headers: str) -> Any:
    response = await wb.client.post(BATCH, json={"background": True, **body}, headers=headers)
    assert response.status_code == 202, response.text
    return response.json()


async def test_a_batch_of_200_mixed_items_with_three_failing_is_partial_failed(wb: DaemonHandle) -> None:
    """Each item is an ordinary execution; the batch's journal has an `item` event per item status
    change, gapless, in the order the items' own journals have them."""
    items = mixed_items(200)
    batch = await start_batch(wb, {"items": items, "concurrency": 8, "metadata": {"run": 1}})
    assert batch["executionKind"] == "batch" and batch["status"] in {"queued", "running"}
    assert len(batch["items"]) == 200 and batch["concurrency"] == 8 and batch["failFast"] is False
    assert batch["cwd"] is None and batch["image"] is None and batch["usage"] is None
    final = await wb.wait(batch["executionId"], 120_000)
    assert final["status"] == "partial_failed"
    assert final["error"]["code"] == "items_failed" and final["error"]["message"].startswith("3 of 200")
    by_index = final["items"]
    assert [i["executionKind"] for i in by_index] == [i["kind"] for i in items]
    for index, item in enumerate(by_index):
        expected = ("failed", FAILING[index]) if index in FAILING else ("completed", 0)
        assert (item["status"], item["exitCode"]) == expected, index
    assert final["usage"]["cpuUserMs"] is not None and final["usage"]["peakMemoryBytes"] > 0

    journal = await wb.events(batch["executionId"])
    assert [e["sequence"] for e in journal] == list(range(1, len(journal) + 1)), "gapless"
    assert journal[-1]["eventType"] == "status" and journal[-1]["status"] == "partial_failed"
    item_events: dict[str, list[str]] = {}
    for event in journal:
        if event["eventType"] == "item":
            item_events.setdefault(event["item"]["executionId"], []).append(event["item"]["status"])
    assert list(item_events) == [i["executionId"] for i in by_index], "one per item, in order"
    for sample in (0, 3, 17, 99, 199):
        item_id = by_index[sample]["executionId"]
        own = [e["status"] for e in await wb.events(item_id) if e["eventType"] == "status"]
        assert item_events[item_id] == own == ["queued", "running", own[-1]], sample
        record = (await wb.client.get(f"/v1/executions/{item_id}")).json()
        assert record["batchId"] == batch["executionId"] and record["executionKind"] == items[sample]["kind"]
    listed = (
        await wb.client.get("/v1/executions", params={"batchId": batch["executionId"], "limit": 1000})
    ).json()
    assert len(listed["executions"]) == 200


async def test_at_most_concurrency_items_run_at_once(wb: DaemonHandle, tmp_path: Path) -> None:
    """Each item notes when it starts and ends; never more than `concurrency` overlap."""
    log = tmp_path / "log"
    command = f"echo start >> {log}; sleep 0.2; echo end >> {log}"
    items = [{"kind": "workbench_bash", "command": command} for _ in range(9)]
    batch = await start_batch(wb, {"items": items, "concurrency": 2})
    final = await wb.wait(batch["executionId"])
    assert final["status"] == "completed" and final["error"] is None
    running = peak = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        peak = max(peak, running)
    assert peak <= 2


async def test_fail_fast_cancels_the_rest_and_fails_the_batch(wb: DaemonHandle) -> None:
    items = [{"kind": "workbench_bash", "command": "sleep 0.3; exit 7"}]
    items += [{"kind": "workbench_bash", "command": "sleep 60"} for _ in range(6)]
    batch = await start_batch(wb, {"items": items, "concurrency": 3, "failFast": True})
    with trio.fail_after(60):
        final = await wb.wait(batch["executionId"])
    assert final["status"] == "failed" and final["error"]["code"] == "fail_fast"
    assert final["items"][0]["status"] == "failed" and final["items"][0]["exitCode"] == 7
    assert {i["status"] for i in final["items"][1:]} == {"cancelled"}
    cancelled = (await wb.client.get(f"/v1/executions/{final['items'][1]['executionId']}")).json()
    assert "failFast" in cancelled["cancelReason"]


async def test_a_batch_cancelled_midway_leaves_no_item_tree_alive(wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 3 for a batch: completed items stay completed; every other item's tree is dead,
    escapees included, before the batch is `cancelled`."""
    escaping = "setsid sleep 300 & sleep 300 & echo up >> {}; wait".format(tmp_path / "up")
    items = [{"kind": "workbench_bash", "command": "true"} for _ in range(3)]
    items += [{"kind": "workbench_bash", "command": escaping} for _ in range(6)]
    batch = await start_batch(wb, {"items": items, "concurrency": 5})
    up = tmp_path / "up"
    await procs.eventually(lambda: up.exists() and len(up.read_text().split()) >= 2)
    ids = [i["executionId"] for i in batch["items"]]
    pids = [pid for item_id in ids for pid in procs.processes_mentioning(item_id)]
    assert pids
    response = await wb.client.post(
        f"/v1/executions/{batch['executionId']}/cancel", json={"reason": "enough"}
    )
    assert response.status_code == 202, response.text
    assert response.json()["execution"]["status"] in {"cancel_requested", "cancelled"}
    final = await wb.wait(batch["executionId"])
    assert final["status"] == "cancelled" and final["cancelReason"] == "enough"
    assert [i["status"] for i in final["items"][:3]] == ["completed"] * 3
    assert {i["status"] for i in final["items"][3:]} == {"cancelled"}
    assert [pid for pid in pids if procs.alive(pid)] == []
    for item_id in ids:
        assert procs.processes_mentioning(item_id) == []
    journal = await wb.events(batch["executionId"])
    assert [e["status"] for e in journal if e["eventType"] == "status"][-2:] == [
        "cancel_requested",
        "cancelled",
    ]


async def test_a_batch_cancelled_with_grace_gives_it_to_its_items(wb: DaemonHandle, tmp_path: Path) -> None:
    """A batch's cancel `graceMs` reaches its items: SIGTERM first, so each item's trap runs."""
    trapping = "trap 'echo bye >> {}; exit 0' TERM; echo up >> {}; sleep 300 & wait"
    command = trapping.format(tmp_path / "trapped", tmp_path / "up")
    batch = await start_batch(wb, {"items": [{"kind": "workbench_bash", "command": command}] * 2})
    up = tmp_path / "up"
    await procs.eventually(lambda: up.exists() and len(up.read_text().split()) >= 2)
    response = await wb.client.post(
        f"/v1/executions/{batch['executionId']}/cancel", json={"reason": "enough", "graceMs": 5000}
    )
    assert response.status_code == 202, response.text
    final = await wb.wait(batch["executionId"])
    assert final["status"] == "cancelled"
    assert {i["status"] for i in final["items"]} == {"cancelled"}
    assert (tmp_path / "trapped").read_text() == "bye\nbye\n"
    for item in final["items"]:
        assert procs.processes_mentioning(item["executionId"]) == []


async def test_accepting_a_batch_is_all_or_none(wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 7: one bad item refuses the whole batch, naming it; nothing is made."""
    good = {"kind": "workbench_bash", "command": "true"}
    for bad, field, code in (
        (
            {"kind": "workbench_bash", "command": "true", "cwd": str(tmp_path / "nope")},
            "items.1.cwd",
            "invalid_request",
        ),
        ({"kind": "workbench_code", "language": "cobol", "code": "x"}, None, "unsupported_language"),
        ({"kind": "workbench_bash", "command": "true", "image": "nope"}, None, "unknown_image"),
        ({"kind": "workbench_bash", "code": "true"}, "items.1", "invalid_request"),
        ({"kind": "batch", "command": "true"}, "items.1.kind", "invalid_request"),
        (
            {"kind": "workbench_bash", "command": "true", "background": True},
            "items.1.background",
            "invalid_request",
        ),
    ):
        response = await wb.client.post(BATCH, json={"items": [good, bad], "background": True})
        assert response.status_code == 422, (bad, response.text)
        error = response.json()["error"]
        assert error["code"] == code and "items.1" in error["message"], error
        if field is not None:
            assert field in [d["field"] for d in error["details"]], error
        if bad["kind"] == "batch":  # the message names the kinds an item may be, and only those
            assert "'batch'" not in error["message"] and "workbench_code" in error["message"], error
    refused: list[dict[str, Any]] = [
        {"items": []},
        {"items": [good] * 1001},
        {"items": [good], "concurrency": 0},
    ]
    for body in refused:
        response = await wb.client.post(BATCH, json=body)
        assert response.status_code == 422, response.text
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    assert not any((wb.data_dir / "executions").iterdir())


async def test_one_idempotency_key_covers_the_whole_batch(wb: DaemonHandle) -> None:
    """Promise 8: the same key and body replay the batch; another body with it is refused."""
    body: dict[str, Any] = {"items": [{"kind": "workbench_bash", "command": "echo once"}] * 3}
    first = await start_batch(wb, body, **{"Idempotency-Key": "batch-1"})
    again = await wb.client.post(
        BATCH, json={"background": True, **body}, headers={"Idempotency-Key": "batch-1"}
    )
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["executionId"] == first["executionId"]
    other = await wb.client.post(
        BATCH, json={"background": True, "items": body["items"][:2]}, headers={"Idempotency-Key": "batch-1"}
    )
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    await wb.wait(first["executionId"])
    listed = (await wb.client.get("/v1/executions", params={"limit": 100})).json()["executions"]
    assert len(listed) == 4  # the batch and its three items, once


async def test_a_foreground_batch_answers_its_terminal_record(wb: DaemonHandle) -> None:
    body = {"items": [{"kind": "workbench_bash", "command": "true"}] * 2, "waitTimeoutMs": 30_000}
    response = await wb.client.post(BATCH, json=body)
    assert response.status_code == 201, response.text
    record = response.json()
    assert record["status"] == "completed" and record["usage"] is not None
    assert record["capabilities"] == {
        "cancellable": "hard",
        "streamingSupport": True,
        "backgroundSupport": True,
        "detachable": False,
        "interactive": False,
    }
    listed = (await wb.client.get("/v1/executions", params={"kind": "batch"})).json()["executions"]
    assert [r["executionId"] for r in listed] == [record["executionId"]]


async def test_a_batch_deadline_caps_its_items_and_times_it_out(wb: DaemonHandle) -> None:
    items = [{"kind": "workbench_bash", "command": "true"}, {"kind": "workbench_bash", "command": "sleep 60"}]
    batch = await start_batch(wb, {"items": items, "timeoutMs": 1500})
    item = (await wb.client.get(f"/v1/executions/{batch['items'][1]['executionId']}")).json()
    assert item["deadlineAt"] == batch["deadlineAt"]
    final = await wb.wait(batch["executionId"])
    assert final["status"] == "timed_out" and final["error"]["code"] == "timeout"
    assert [i["status"] for i in final["items"]] == ["completed", "timed_out"]


async def test_a_detached_batch_delivers_one_exit(wb: DaemonHandle) -> None:
    batch = await start_batch(
        wb, {"items": [{"kind": "workbench_bash", "command": "exit 2"}], "detached": True}
    )
    await wb.wait(batch["executionId"])
    exits = (await wb.client.get("/v1/exits", params={"waitTimeoutMs": 5000})).json()["exits"]
    assert [e["executionId"] for e in exits] == [batch["executionId"]]
    assert exits[0]["status"] == "failed" and exits[0]["executionKind"] == "batch"
    assert exits[0]["usage"] is not None


async def test_a_batch_is_not_rerun_and_the_refusal_names_it(wb: DaemonHandle) -> None:
    batch = await start_batch(wb, {"items": [{"kind": "workbench_bash", "command": "true"}]})
    await wb.wait(batch["executionId"])
    response = await wb.client.post(f"/v1/executions/{batch['executionId']}/rerun", json={"background": True})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["message"].startswith("a batch is not rerun"), error
    assert error["details"] == [{"field": "executionId", "message": error["details"][0]["message"]}], error
    assert "rerun its items" in error["details"][0]["message"], error
