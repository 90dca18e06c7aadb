"""`nodeId` on the record and the `node` of a start, with one daemon (and, under
`--store=postgres`, one node of a shared store)."""

from __future__ import annotations

from tests.conftest import DaemonHandle


async def test_the_record_names_its_node_and_a_pin_to_it_runs(make_daemon: object) -> None:
    wb: DaemonHandle = await make_daemon(node_id="node-one")  # type: ignore[operator]
    record = await wb.run("true", node="node-one")
    assert record["status"] == "completed" and record["nodeId"] == "node-one"
    unpinned = await wb.run("true")
    assert unpinned["nodeId"] == "node-one"


async def test_a_bad_node_is_refused_and_changes_nothing(wb: DaemonHandle) -> None:
    """Promise 7: a malformed node name is 422 and leaves no row."""
    for node in ("", "-x", "a/b", "x" * 64, 5):
        response = await wb.client.post(
            "/v1/executions/workbench_bash", json={"command": "true", "node": node, "background": True}
        )
        assert response.status_code == 422, (node, response.text)
        assert response.json()["error"]["code"] == "invalid_request"
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []


async def test_with_one_daemon_a_pin_to_another_node_is_refused(wb: DaemonHandle, store_engine: str) -> None:
    response = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "true", "node": "elsewhere", "background": True}
    )
    if store_engine == "sqlite":
        assert response.status_code == 422, response.text
        assert "elsewhere" in response.json()["error"]["message"]
        assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    else:
        # A shared store: it waits for that node to claim it, and no other node takes it.
        assert response.status_code == 202, response.text
        assert response.json()["status"] == "queued" and response.json()["nodeId"] is None


async def test_a_rerun_or_a_batch_item_takes_no_node(wb: DaemonHandle) -> None:
    """Promise 7: `node` is a start's alone; in a rerun's body or a batch's item it is 422 and
    starts nothing (a rerun runs on the node that takes it, with the original's cwd; a batch and
    its items too). So the clients and the CLI offer `node` only on a start."""
    original = await wb.run("true")
    rerun = await wb.client.post(
        f"/v1/executions/{original['executionId']}/rerun", json={"node": "node-one", "background": True}
    )
    assert rerun.status_code == 422, rerun.text
    assert "node" in rerun.text
    item = {"kind": "workbench_bash", "command": "true", "node": "node-one"}
    batch = await wb.client.post("/v1/executions/batch", json={"items": [item], "background": True})
    assert batch.status_code == 422, batch.text
    assert "items.0.node" in batch.text
    listed = (await wb.client.get("/v1/executions")).json()["executions"]
    assert [r["executionId"] for r in listed] == [original["executionId"]]
