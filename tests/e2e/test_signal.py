"""`POST .../signal`: a signal for every process of a running tree, journaled; refused otherwise."""

from __future__ import annotations

from pathlib import Path

import trio

from tests import procs
from tests.conftest import DaemonHandle


async def test_a_signal_reaches_the_tree_and_is_journaled(wb: DaemonHandle, tmp_path: Path) -> None:
    started = await wb.start(
        "trap 'echo got INT; exit 7' INT; touch ready; while :; do sleep 0.05; done", cwd=str(tmp_path)
    )
    execution_id = started["executionId"]
    await procs.eventually(lambda: (tmp_path / "ready").exists())
    # The tree may run before the daemon has its spawn's answer: until the record says
    # `running`, the execution is `queued` to the API, and a signal is refused (a 409).
    with trio.fail_after(30):
        while (await wb.client.get(f"/v1/executions/{execution_id}")).json()["status"] != "running":  # noqa: ASYNC110 - a test's look
            await trio.sleep(0.01)
    response = await wb.client.post(f"/v1/executions/{execution_id}/signal", json={"signal": "INT"})
    assert response.status_code == 202, response.text
    assert response.json()["execution"]["executionId"] == execution_id
    record = await wb.wait(execution_id)
    assert (record["status"], record["exitCode"]) == ("failed", 7)
    events = await wb.events(execution_id)
    (sent,) = [e for e in events if e["eventType"] == "signal"]
    assert sent["signal"] == "SIGINT" and sent["status"] == "running"
    output = [e for e in events if e["eventType"] == "output"]
    assert "got INT" in "".join(e["outputDelta"] for e in output)
    assert sent["sequence"] < events[-1]["sequence"], "the terminal status event stays the last"


async def test_only_a_running_execution_takes_a_signal(wb: DaemonHandle) -> None:
    """Promise 7: a refused signal changes nothing (no event)."""
    ended = await wb.run("true")
    path = f"/v1/executions/{ended['executionId']}/signal"
    refused = await wb.client.post(path, json={"signal": "TERM"})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflict"
    assert "completed" in refused.json()["error"]["message"]
    assert len(await wb.events(ended["executionId"])) == ended["lastSequence"]


async def test_bad_signals_are_refused(wb: DaemonHandle) -> None:
    running = await wb.start("sleep 30")
    path = f"/v1/executions/{running['executionId']}/signal"
    for body in (
        {"signal": "KILL"},
        {"signal": "SIGINT"},
        {"signal": "int"},
        {},
        {"signal": 2},
        {"signal": "INT", "x": 1},
    ):
        response = await wb.client.post(path, json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["code"] == "invalid_request"
    assert (await wb.client.post(path)).status_code == 400, "a body is needed"
    missing = await wb.client.post(
        "/v1/executions/ex_01JD0000000000000000000000/signal", json={"signal": "INT"}
    )
    assert missing.status_code == 404
    assert [e["eventType"] for e in await wb.events(running["executionId"])].count("signal") == 0
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])
