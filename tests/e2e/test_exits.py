"""Detached executions and the exits feed: at-least-once delivery, leases, acks, the webhook."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import pytest
import trio

from tests import procs
from tests.conftest import DaemonHandle


async def poll(
    wb: DaemonHandle, wait_ms: int = 0, lease_ms: int = 30_000, limit: int = 100
) -> list[dict[str, Any]]:
    response = await wb.client.get(
        "/v1/exits", params={"waitTimeoutMs": wait_ms, "leaseMs": lease_ms, "limit": limit}
    )
    assert response.status_code == 200, response.text
    exits: list[dict[str, Any]] = response.json()["exits"]
    return exits


async def ack(wb: DaemonHandle, delivery_id: str) -> None:
    response = await wb.client.post(f"/v1/exits/{delivery_id}/ack")
    assert response.status_code == 204, response.text


async def test_detach_while_running_delivers_the_exit_once(wb: DaemonHandle, tmp_path: Any) -> None:
    started = await wb.start(
        "echo out; echo err >&2; while [ ! -e go ]; do sleep 0.02; done; exit 3",
        cwd=str(tmp_path),
        metadata={"ticket": 42},
    )
    eid = started["executionId"]
    detached = await wb.client.post(f"/v1/executions/{eid}/detach")
    assert detached.status_code == 200 and detached.json() == {"detached": True}
    assert await poll(wb) == []
    (tmp_path / "go").touch()
    exits = await poll(wb, wait_ms=30_000)
    assert len(exits) == 1
    item = exits[0]
    assert item["deliveryId"].startswith("dl_") and item["attempt"] == 1
    assert item["executionId"] == eid and item["executionKind"] == "workbench_bash"
    assert (item["status"], item["exitCode"], item["signal"]) == ("failed", 3, None)
    assert item["metadata"] == {"ticket": 42}
    assert (item["stdoutTail"], item["stderrTail"]) == ("out\n", "err\n")
    assert item["finishedAt"].endswith("Z")
    record = await wb.wait(eid)
    assert record["detached"] is True
    await ack(wb, item["deliveryId"])
    await ack(wb, item["deliveryId"])  # acking twice is fine
    assert await poll(wb, wait_ms=200, lease_ms=1000) == []


async def test_detach_after_the_exit_returns_the_record(wb: DaemonHandle) -> None:
    record = await wb.run("exit 0")
    response = await wb.client.post(f"/v1/executions/{record['executionId']}/detach")
    assert response.status_code == 200
    body = response.json()
    assert body["detached"] is False and body["execution"]["status"] == "completed"
    assert await poll(wb) == []


async def test_only_detached_executions_reach_the_feed(wb: DaemonHandle) -> None:
    await wb.run("true")
    detached = await wb.run("true", detached=True)
    exits = await poll(wb, wait_ms=5000)
    assert [e["executionId"] for e in exits] == [detached["executionId"]]


async def test_a_look_with_no_lease_hides_and_changes_nothing(wb: DaemonHandle) -> None:
    record = await wb.run("echo bye", detached=True)
    looks = [await poll(wb, wait_ms=5000, lease_ms=0) for _ in range(3)]
    assert [[(e["executionId"], e["attempt"]) for e in look] for look in looks] == [
        [(record["executionId"], 1)]
    ] * 3, "the attempt shown is the next lease's, and stays"
    leased = await poll(wb)
    assert [(e["deliveryId"], e["attempt"]) for e in leased] == [(looks[0][0]["deliveryId"], 1)]
    assert await poll(wb, lease_ms=0) == [], "a leased exit is hidden from a look too"
    await ack(wb, leased[0]["deliveryId"])
    assert await poll(wb, lease_ms=0) == []


async def test_an_unacked_exit_comes_back_after_its_lease_with_the_next_attempt(wb: DaemonHandle) -> None:
    record = await wb.run("echo bye", detached=True)
    first = await poll(wb, lease_ms=1000)
    assert [e["attempt"] for e in first] == [1]
    assert await poll(wb) == [], "hidden while leased"
    again = await poll(wb, wait_ms=10_000)
    assert [(e["deliveryId"], e["attempt"]) for e in again] == [(first[0]["deliveryId"], 2)]
    assert again[0]["executionId"] == record["executionId"]
    await ack(wb, again[0]["deliveryId"])
    assert await poll(wb, wait_ms=1500) == []


async def test_deleting_the_execution_does_not_drop_an_unacked_exit(wb: DaemonHandle) -> None:
    record = await wb.run("true", detached=True)
    assert (await wb.client.delete(f"/v1/executions/{record['executionId']}")).status_code == 204
    exits = await poll(wb, wait_ms=5000)
    assert [e["executionId"] for e in exits] == [record["executionId"]]


async def test_a_long_poll_is_woken_by_a_new_exit(wb: DaemonHandle, tmp_path: Any) -> None:
    started = await wb.start("while [ ! -e go ]; do sleep 0.02; done", cwd=str(tmp_path), detached=True)
    got: list[dict[str, Any]] = []

    async def consumer() -> None:
        got.extend(await poll(wb, wait_ms=60_000))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        await trio.sleep(0.3)
        assert got == []
        (tmp_path / "go").touch()
        with trio.fail_after(20):  # far less than the 60 s the poll may wait
            await wb.wait(started["executionId"])
    assert [e["executionId"] for e in got] == [started["executionId"]]


async def test_concurrent_consumers_never_share_a_lease(wb: DaemonHandle) -> None:
    ids = {(await wb.run(f"exit {i}", detached=True))["executionId"] for i in range(12)}
    taken: list[list[dict[str, Any]]] = [[], [], []]

    async def consumer(i: int) -> None:
        for _ in range(6):
            taken[i].extend(await poll(wb, limit=2))

    async with trio.open_nursery() as nursery:
        for i in range(3):
            nursery.start_soon(consumer, i)
    delivered = [e["deliveryId"] for batch in taken for e in batch]
    assert len(delivered) == len(set(delivered)) == 12
    assert {e["executionId"] for batch in taken for e in batch} == ids


async def test_bad_exit_requests(wb: DaemonHandle) -> None:
    assert (await wb.client.post("/v1/exits/dl_01JD0000000000000000000000/ack")).status_code == 404
    assert (await wb.client.post("/v1/exits/../ack")).status_code == 404
    for params in ({"limit": "0"}, {"leaseMs": "-1"}, {"waitTimeoutMs": "x"}, {"other": "1"}):
        response = await wb.client.get("/v1/exits", params=params)
        assert response.status_code == 400 and response.json()["error"]["code"] == "bad_request", params


async def _read_post(stream: trio.SocketStream) -> dict[str, Any]:
    """The JSON body of the one POST a webhook receiver's connection carries."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive_some(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")).split(b":")[
            1
        ]
    )
    while len(body) < length:
        body += await stream.receive_some(65536)
    item: dict[str, Any] = json.loads(body)
    return item


async def _answer(stream: trio.SocketStream, status: bytes) -> None:
    await stream.send_all(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    await stream.aclose()


async def _hook(nursery: trio.Nursery, receiver: Callable[[trio.SocketStream], Awaitable[None]]) -> str:
    """The URL of a webhook receiver served in `nursery`: `receiver` answers each connection."""
    listeners = await nursery.start(partial(trio.serve_tcp, receiver, 0, host="127.0.0.1"))
    return f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/hook"


@pytest.mark.sqlite_only
async def test_the_webhook_retries_until_the_receiver_takes_it(make_daemon: Any) -> None:
    """A receiver that fails twice then succeeds: delivered, with backoff, and acked."""
    received: list[dict[str, Any]] = []
    done = trio.Event()

    async def receiver(stream: trio.SocketStream) -> None:
        received.append(await _read_post(stream))
        await _answer(stream, b"500 Internal Server Error" if len(received) <= 2 else b"204 No Content")
        if len(received) == 3:
            done.set()

    async with trio.open_nursery() as nursery:
        wb: DaemonHandle = await make_daemon(exit_webhook_url=await _hook(nursery, receiver))
        record = await wb.run("echo hooked", detached=True)
        with trio.fail_after(30):
            await done.wait()
        nursery.cancel_scope.cancel()
    assert [r["attempt"] for r in received] == [1, 2, 3]
    assert {r["deliveryId"] for r in received} == {received[0]["deliveryId"]}
    assert received[0]["executionId"] == record["executionId"] and received[0]["stdoutTail"] == "hooked\n"

    def acked() -> bool:
        with sqlite3.connect(wb.data_dir / "workbench.db") as db:
            rows = db.execute("SELECT acked_at FROM exits").fetchall()
        return len(rows) == 1 and rows[0][0] is not None

    await procs.eventually(acked)
    assert await poll(wb) == []


async def test_a_failing_webhook_hides_no_exit_from_the_feed(make_daemon: Any) -> None:
    """While the webhook waits to try a failed delivery again, the exit is in the feed: a look
    shows it, a reader leases it (the webhook does not post it meanwhile), and its ack ends both."""
    received: list[dict[str, Any]] = []

    async def receiver(stream: trio.SocketStream) -> None:
        received.append(await _read_post(stream))
        await _answer(stream, b"500 Internal Server Error")

    async with trio.open_nursery() as nursery:
        wb: DaemonHandle = await make_daemon(exit_webhook_url=await _hook(nursery, receiver))
        record = await wb.run("echo hooked", detached=True)
        with trio.fail_after(30):
            while len(received) < 2:  # noqa: ASYNC110 - the receiver under test counts the posts
                await trio.sleep(0.01)
        # Its next try is 2 s away: meanwhile the feed shows it, to a look (woken when the webhook
        # gives it back) as to a lease.
        looked = await poll(wb, wait_ms=1500, lease_ms=0)
        assert [(e["executionId"], e["attempt"]) for e in looked] == [(record["executionId"], 3)]
        leased = await poll(wb, lease_ms=4000)
        assert [(e["deliveryId"], e["attempt"]) for e in leased] == [(looked[0]["deliveryId"], 3)]
        posted = len(received)
        await trio.sleep(2.5)  # past the webhook's retry, within the reader's lease
        assert len(received) == posted, "the webhook does not post an exit a reader holds"
        assert await poll(wb, lease_ms=0) == [], "a reader's lease hides it, as any lease does"
        await ack(wb, leased[0]["deliveryId"])
        await trio.sleep(2.5)  # past the lease: nothing is posted again
        assert len(received) == posted
        nursery.cancel_scope.cancel()
    assert {r["attempt"] for r in received[:2]} == {1, 2}
    assert await poll(wb, lease_ms=0) == []
