"""`onWaitTimeout` of a foreground start: return, detach, cancel, and detach racing the end.

API.md v2: `detach` detaches in the same step as `POST .../detach` would, so each outcome goes
to the answer (the run had ended) or to the exits feed (it had not), never to neither.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from tests.e2e.test_exits import ack, poll


async def start(wb: DaemonHandle, command: str, wait_ms: int, action: str, **body: Any) -> dict[str, Any]:
    response = await wb.client.post(
        "/v1/executions/workbench_bash",
        json={"command": command, "waitTimeoutMs": wait_ms, "onWaitTimeout": action, **body},
    )
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_return_answers_the_running_record_and_the_run_goes_on(wb: DaemonHandle, tmp_path: Any) -> None:
    record = await start(wb, f"echo early; while [ ! -e {tmp_path}/go ]; do sleep 0.02; done", 300, "return")
    assert (record["status"], record["detached"]) == ("running", False)
    (tmp_path / "go").touch()
    assert (await wb.wait(record["executionId"]))["status"] == "completed"


async def test_detach_hands_the_outcome_to_the_exits_feed(wb: DaemonHandle, tmp_path: Any) -> None:
    record = await start(wb, f"while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; echo late", 200, "detach")
    eid = record["executionId"]
    assert (record["status"], record["detached"]) == ("running", True)
    (tmp_path / "go").touch()
    exits = await poll(wb, wait_ms=30_000)
    assert [(e["executionId"], e["status"], e["stdoutTail"]) for e in exits] == [(eid, "completed", "late\n")]
    await ack(wb, exits[0]["deliveryId"])


async def test_cancel_answers_once_the_tree_is_dead(wb: DaemonHandle) -> None:
    record = await start(wb, "sleep 60 & sleep 60; wait", 200, "cancel")
    assert record["status"] == "cancelled"
    assert record["cancelReason"] == "the wait of 200 ms passed (onWaitTimeout: cancel)"
    # The tree is dead (the fixture checks that no process is left) and nothing more is written.
    events = await wb.events(record["executionId"])
    assert events[-1]["status"] == "cancelled" and events[-1]["sequence"] == record["lastSequence"]


async def test_a_run_that_ends_within_the_wait_ignores_on_wait_timeout(wb: DaemonHandle) -> None:
    for action in ("return", "detach", "cancel"):
        record = await start(wb, "echo quick", 30_000, action)
        assert (record["status"], record["detached"]) == ("completed", False), action
    assert await poll(wb) == []


async def test_on_wait_timeout_is_for_foreground_starts(wb: DaemonHandle) -> None:
    for action in ("detach", "cancel"):
        response = await wb.client.post(
            "/v1/executions/workbench_bash",
            json={"command": "true", "background": True, "onWaitTimeout": action},
        )
        assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    response = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "true", "onWaitTimeout": "forget"}
    )
    assert response.status_code == 422


@pytest.mark.parametrize("order", ["ended first", "detached first"])
async def test_detach_and_the_end_in_either_order(
    wb: DaemonHandle, order: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two sides of the race, made to happen in one order: the run ends at the very moment the
    wait expires (the answer carries the outcome, nothing goes to the feed), or the detach lands
    just before the end (the feed carries it)."""
    service = wb.daemon.service
    real_wait = service.wait_terminal

    async def expires(execution_id: str, *, fresh: bool = False) -> Any:
        if order == "ended first":
            await real_wait(execution_id)  # the end is committed, then the window closes
        else:
            await trio.sleep_forever()  # the window closes while it still runs
        return None

    monkeypatch.setattr(service, "wait_terminal", expires)
    command = "true" if order == "ended first" else f"while [ ! -e {tmp_path}/go ]; do sleep 0.02; done"
    record = await start(wb, command, 300, "detach")
    monkeypatch.undo()
    if order == "ended first":
        assert (record["status"], record["detached"]) == ("completed", False)
        assert await poll(wb, wait_ms=300) == []
    else:
        assert (record["status"], record["detached"]) == ("running", True)
        (tmp_path / "go").touch()
        exits = await poll(wb, wait_ms=30_000)
        assert [e["executionId"] for e in exits] == [record["executionId"]]


@pytest.mark.timeout(300)
async def test_the_outcome_is_never_lost_when_the_end_races_the_expiry(wb: DaemonHandle) -> None:
    """Runs that end about when their wait expires: each outcome is in the answer (terminal) or
    in the exits feed (detached), and every detached one's exit comes, exactly once acked."""
    answered: list[dict[str, Any]] = []
    for i in range(40):
        sleep_ms = 20 + (i % 8) * 10
        wait_ms = max(0, sleep_ms + (i % 6) * 10 - 10)
        answered.append(await start(wb, f"sleep {sleep_ms / 1000}", wait_ms, "detach"))
    for record in answered:
        assert record["status"] in ("completed", "running", "queued"), record
        assert record["status"] == "completed" or record["detached"], "an outcome that goes nowhere"
    expected = {r["executionId"] for r in answered if r["detached"]}
    seen: set[str] = set()
    with ceilings.within(60, f"the exits of {len(expected)} detached runs"):
        while seen < expected:
            for item in await poll(wb, wait_ms=5_000):
                seen.add(item["executionId"])
                await ack(wb, item["deliveryId"])
    assert seen == expected
    for record in answered:
        final = await wb.wait(record["executionId"])
        assert final["status"] == "completed" and final["detached"] == record["detached"]
