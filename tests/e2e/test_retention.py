"""Retention (API.md v2): bulk delete, `GET /v1/stats`, `WORKBENCH_RETENTION`, space given back."""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests import pg
from tests.conftest import DaemonHandle
from tests.e2e.test_security import Principals, principals  # noqa: F401 (a fixture)


async def stats(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/v1/stats")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_bulk_delete_takes_the_matching_ended_executions_with_their_events_and_files(
    wb: DaemonHandle,
) -> None:
    """Bad input changes nothing (7): the bulk delete removes only ended executions that match."""
    ok = await wb.run("echo fine")
    bad = await wb.run("printf 'not utf-8: \\377'; exit 3")  # its stdout kept as an artifact
    live = await wb.start("sleep 30")
    assert bad["status"] == "failed"
    assert (wb.data_dir / "executions" / bad["executionId"]).exists()

    response = await wb.client.delete("/v1/executions", params={"status": "failed"})
    assert response.status_code == 200 and response.json() == {"deleted": 1}
    assert (await wb.client.get(f"/v1/executions/{bad['executionId']}")).status_code == 404
    assert (await wb.client.get(f"/v1/executions/{bad['executionId']}/events")).status_code == 404
    assert not (wb.data_dir / "executions" / bad["executionId"]).exists()
    assert (await wb.client.get(f"/v1/executions/{ok['executionId']}")).status_code == 200

    # Ended before a time before all of them: none; before now: the completed one, never the live one.
    past = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)).isoformat()
    response = await wb.client.delete("/v1/executions", params={"before": past})
    assert response.json() == {"deleted": 0}
    response = await wb.client.delete("/v1/executions", params={"before": "0s"})
    assert response.status_code == 200 and response.json() == {"deleted": 1}
    assert (await wb.client.get(f"/v1/executions/{ok['executionId']}")).status_code == 404
    assert (await wb.client.get(f"/v1/executions/{live['executionId']}")).json()["status"] == "running"
    counts = (await stats(wb.client))["executions"]
    assert counts["running"] == 1 and counts["completed"] == counts["failed"] == 0
    await wb.client.post(f"/v1/executions/{live['executionId']}/cancel")
    await wb.wait(live["executionId"])


async def test_a_bad_bulk_delete_is_400_and_deletes_nothing(wb: DaemonHandle) -> None:
    """Bad input gets a clear error and changes nothing (7)."""
    await wb.run("true")
    for params in (
        {},
        {"status": "running"},
        {"status": "completed,bogus"},
        {"before": "yesterday"},
        {"before": "2026-01-01T00:00:00"},  # no offset: whose midnight?
        {"before": "0s", "limit": "3"},
        # ISO 8601 forms that are not RFC 3339.
        {"before": "20260131T120000Z"},
        {"before": "2026-W05-1T00:00Z"},
        {"before": "2026-01-31T12:00:00+05"},
        {"before": "2026-01-31"},
        # More than 100 years back, as a time too.
        {"before": "1900-01-01T00:00:00Z"},
        {"before": "0001-01-01T00:00:00+23:59"},
    ):
        response = await wb.client.delete("/v1/executions", params=params)
        assert response.status_code == 400, (params, response.text)
        assert response.json()["error"]["code"] == "bad_request"
    # A duration past the longest one is 400 naming the bound, not a time out of range.
    for before in ("999999999999d", "36501d", "9" * 40 + "ms"):
        response = await wb.client.delete("/v1/executions", params={"before": before})
        assert response.status_code == 400, (before, response.text)
        assert "longer than 100 years (36500d)" in response.json()["error"]["message"], response.text
    assert (await stats(wb.client))["executions"]["completed"] == 1
    # RFC 3339 allows a lower-case `t` and `z`, and any number of fraction digits.
    for before in ("2026-01-31t12:00:00z", "2026-01-31T12:00:00.123456789+05:30"):
        response = await wb.client.delete("/v1/executions", params={"before": before})
        assert response.status_code == 200 and response.json() == {"deleted": 0}, (before, response.text)
    anonymous = httpx.AsyncClient(base_url=wb.url)
    async with anonymous:
        assert (await anonymous.delete("/v1/executions", params={"before": "0s"})).status_code == 401
        assert (await anonymous.get("/v1/stats")).status_code == 401
    assert (await stats(wb.client))["executions"]["completed"] == 1


async def test_a_principal_deletes_and_counts_only_its_own(principals: Principals) -> None:  # noqa: F811
    """No one sees what is not theirs (9): bulk delete and stats are per principal; admin's are all."""
    for name in ("alice", "bob"):
        response = await principals[name].post(
            "/v1/executions/workbench_bash", json={"command": "true", "waitTimeoutMs": 30_000}
        )
        assert response.status_code == 201 and response.json()["status"] == "completed"
    assert (await stats(principals["admin"]))["executions"]["completed"] == 2
    assert (await stats(principals["bob"]))["executions"]["completed"] == 1
    runner_stats = await principals["runner"].get("/v1/stats")  # tools:execute only
    assert runner_stats.status_code == 403
    reader_delete = await principals["reader"].delete("/v1/executions", params={"before": "0s"})
    assert reader_delete.status_code == 403
    response = await principals["alice"].delete("/v1/executions", params={"before": "0s"})
    assert response.json() == {"deleted": 1}
    assert (await stats(principals["bob"]))["executions"]["completed"] == 1
    assert (await stats(principals["admin"]))["executions"]["completed"] == 1


async def test_acked_exits_go_with_their_execution_and_unacked_ones_stay(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Nothing is lost (1): an exit not yet delivered outlives the deletion of its execution."""
    ids = []
    for n in range(2):
        # It runs until it is detached: a detach after the end would make no exit.
        started = await wb.start(f"while [ ! -e go{n} ]; do sleep 0.02; done", cwd=str(tmp_path))
        response = await wb.client.post(f"/v1/executions/{started['executionId']}/detach")
        assert response.status_code == 200 and response.json() == {"detached": True}
        (tmp_path / f"go{n}").touch()
        await wb.wait(started["executionId"])
        ids.append(started["executionId"])
    exits = (await wb.client.get("/v1/exits", params={"leaseMs": 0})).json()["exits"]
    acked = next(e for e in exits if e["executionId"] == ids[0])
    assert (await wb.client.post(f"/v1/exits/{acked['deliveryId']}/ack")).status_code == 204
    assert (await wb.client.delete("/v1/executions", params={"before": "0s"})).json() == {"deleted": 2}
    left = pg.store_rows(wb.data_dir, "SELECT execution_id, acked_at IS NOT NULL FROM exits")
    assert left == [(ids[1], False)]
    exits = (await wb.client.get("/v1/exits", params={"leaseMs": 0})).json()["exits"]
    assert [e["executionId"] for e in exits] == [ids[1]]


def store_files_bytes(data_dir: Path) -> int:
    return sum(p.stat().st_size for p in data_dir.glob("workbench.db*"))


@pytest.mark.sqlite_only
async def test_deleting_gives_the_space_back_to_the_disk(wb: DaemonHandle) -> None:
    """The store shrinks on disk after a delete (incremental vacuum), and says so in its stats."""
    with sqlite3.connect(wb.data_dir / "workbench.db") as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
    for _ in range(3):
        record = await wb.run("head -c 1500000 /dev/urandom | base64 -w 0")
        assert record["output"]["stdoutBytes"] == 2_000_000
    before = await stats(wb.client)
    assert before["storeBytes"] >= 6_000_000 and before["dataDirBytes"] >= before["storeBytes"] // 2
    assert before["storeBytes"] == store_files_bytes(wb.data_dir)
    assert (await wb.client.delete("/v1/executions", params={"status": "completed"})).json() == {"deleted": 3}
    after = await stats(wb.client)
    assert after["storeBytes"] < 1_000_000, after
    assert store_files_bytes(wb.data_dir) < 1_000_000
    assert after["storeFreeBytes"] == 0
    assert after["executions"] == {s: 0 for s in before["executions"]}


async def test_retention_removes_what_ended_longer_ago_and_keeps_the_rest(make_daemon: Any) -> None:
    """WORKBENCH_RETENTION: ended executions go once older than it; a running one stays."""
    wb: DaemonHandle = await make_daemon(retention_ms=300)
    assert (await stats(wb.client))["retentionMs"] == 300
    done = await wb.run("echo old")
    live = await wb.start("sleep 30")
    for _ in range(100):  # the sweep runs every second at the most: no event to wait on
        if (await wb.client.get(f"/v1/executions/{done['executionId']}")).status_code == 404:
            break
        await trio.sleep(0.1)
    else:
        raise AssertionError("the retention sweep did not remove the execution in 10 s")
    assert not (wb.data_dir / "executions" / done["executionId"]).exists()
    assert (await wb.client.get(f"/v1/executions/{live['executionId']}")).json()["status"] == "running"
    await wb.client.post(f"/v1/executions/{live['executionId']}/cancel")
    await wb.wait(live["executionId"])
