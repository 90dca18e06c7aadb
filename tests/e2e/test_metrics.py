"""`GET /metrics` (API.md v2 "Operations"): the Prometheus text format, read with a token."""

from __future__ import annotations

from typing import Any

import httpx
import trio
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import DaemonHandle


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_metrics_count_executions_latencies_and_followers(wb: DaemonHandle) -> None:
    """Counts by status, queue depth, spawn and commit histograms, store size and followers."""
    await wb.run("true")
    await wb.run("exit 2")
    live = await wb.start("sleep 30")
    followers_seen = 0

    async def follow() -> None:
        await wb.client.post(f"/v1/executions/{live['executionId']}/wait", json={"waitTimeoutMs": 20_000})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(follow)
        with trio.fail_after(10):
            while followers_seen < 1:
                response = await wb.client.get("/metrics")
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
                got = samples(response.text)
                followers_seen = int(got[("workbench_followers", ())])
                await trio.sleep(0.05)
        await wb.client.post(f"/v1/executions/{live['executionId']}/cancel")
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_executions", (("status", "completed"),))] == 1
    assert got[("workbench_executions", (("status", "failed"),))] == 1
    assert got[("workbench_executions", (("status", "cancelled"),))] == 1
    assert got[("workbench_queue_depth", ())] == 0
    assert got[("workbench_followers", ())] == 0
    assert got[("workbench_spawn_seconds_count", ())] == 3
    assert got[("workbench_commit_seconds_count", ())] >= 6
    assert got[("workbench_store_bytes", ())] > 0
    assert ("workbench_spawn_seconds_bucket", (("le", "+Inf"),)) in got


async def test_metrics_count_the_queue_and_deletes(make_daemon: Any) -> None:
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1)
    first = await wb.start("sleep 30")
    queued = [await wb.start("true") for _ in range(2)]
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_queue_depth", ())] == 2 and got[("workbench_running", ())] == 1
    await wb.client.post(f"/v1/executions/{first['executionId']}/cancel")
    for execution in queued:
        await wb.wait(execution["executionId"])
    assert (await wb.client.delete("/v1/executions", params={"before": "0s"})).json() == {"deleted": 3}
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_executions_deleted_total", ())] == 3
    assert got[("workbench_executions", (("status", "completed"),))] == 0
    # One at a time counts too, by request (`DELETE /v1/executions/{id}`) as in bulk.
    one = await wb.run("true")
    assert (await wb.client.delete(f"/v1/executions/{one['executionId']}")).status_code == 204
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_executions_deleted_total", ())] == 4


async def test_the_daemon_s_own_watches_are_no_followers(wb: DaemonHandle) -> None:
    """A service waiting for its log to say it is ready, and a batch waiting for its items, are
    the daemon's own work: `workbench_followers` counts the clients' waits and streams alone."""
    service = await wb.start(
        "echo starting; sleep 30",
        service=True,
        readiness={"logPattern": "never said"},
        readyTimeoutMs=30_000,
    )
    batch = await wb.client.post(
        "/v1/executions/batch",
        json={"items": [{"kind": "workbench_bash", "command": "sleep 30"}], "background": True},
    )
    assert batch.status_code == 202, batch.text
    watches = wb.daemon.service.store.watches
    with trio.fail_after(10):
        # Until the daemon watches the service (its readiness) and the batch's item.
        for _ in iter(int, 1):
            watched = watches.watched()
            if service["executionId"] in watched and len(watched) >= 2:
                break
            await trio.sleep(0.01)
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_followers", ())] == 0, got
    for execution_id in (service["executionId"], batch.json()["executionId"]):
        await wb.client.post(f"/v1/executions/{execution_id}/cancel")


async def test_metrics_need_a_reading_token_unless_opened_for_loopback(make_daemon: Any) -> None:
    """No one sees what is not theirs (9): without WORKBENCH_METRICS_OPEN a token is needed."""
    closed: DaemonHandle = await make_daemon()
    async with httpx.AsyncClient(base_url=closed.url) as anonymous:
        response = await anonymous.get("/metrics")
        assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
        assert (await anonymous.get("/metrics", params={"x": "1"})).status_code == 401
    assert (await closed.client.get("/metrics", params={"x": "1"})).status_code == 400
    opened: DaemonHandle = await make_daemon(data_dir=closed.data_dir.parent / "open", metrics_open=True)
    async with httpx.AsyncClient(base_url=opened.url) as anonymous:
        response = await anonymous.get("/metrics")
        assert response.status_code == 200 and "workbench_queue_depth" in response.text
