"""Services: executions meant to stay up, their readiness, and their end (cancel kills the tree)."""

from __future__ import annotations

import socket
import sys
from typing import Any

import httpx

from tests import ceilings, procs
from tests.conftest import DaemonHandle
from tests.ports import free_port
from tests.sse import frames

PYTHON = sys.executable


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def start_service(wb: DaemonHandle, command: str, **body: Any) -> dict[str, Any]:
    return await wb.start(command, service=True, **body)


async def wait_ready(wb: DaemonHandle, execution_id: str, wait_ms: int = 30_000) -> dict[str, Any]:
    response = await wb.client.post(
        f"/v1/executions/{execution_id}/wait", json={"until": "ready", "waitTimeoutMs": wait_ms}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def cancel(wb: DaemonHandle, execution_id: str) -> dict[str, Any]:
    response = await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    assert response.status_code == 202, response.text
    return await wb.wait(execution_id)


async def test_an_http_server_is_ready_when_it_listens_and_cancel_leaves_nothing(wb: DaemonHandle) -> None:
    """Promise 3 for services: ready within its time, answering, then cancelled with its whole tree."""
    port = free_port()
    command = f"{PYTHON} -m http.server {port} --bind 127.0.0.1"
    started = await start_service(wb, command, readiness={"port": port}, readyTimeoutMs=30_000)
    eid = started["executionId"]
    assert started["service"] is True and started["ready"] is False
    assert started["deadlineAt"] is None and started["timeoutMs"] is None  # no default deadline
    assert started["readiness"] == {"port": port, "logPattern": None}
    with ceilings.within(40, "an http.server service to be ready"):
        waited = await wait_ready(wb, eid)
    record = waited["execution"]
    assert waited["waitTimedOut"] is False and record["ready"] is True and record["status"] == "running"
    assert record["readyAt"] is not None
    async with httpx.AsyncClient() as plain:
        answer = await plain.get(f"http://127.0.0.1:{port}/")
    assert answer.status_code == 200
    events = await wb.events(eid)
    ready = [e for e in events if e["eventType"] == "ready"]
    assert len(ready) == 1 and f"port {port}" in ready[0]["message"]
    tree = procs.processes_mentioning(eid)
    assert tree
    final = await cancel(wb, eid)
    assert final["status"] == "cancelled" and final["ready"] is True
    await procs.eventually(lambda: not any(procs.alive(p) for p in tree), within_s=10)
    assert procs.processes_mentioning(eid) == [] and not listening(port)


async def test_background_children_outlive_the_leader_while_the_service_lives(wb: DaemonHandle) -> None:
    started = await start_service(wb, "sleep 60 & echo started")
    eid = started["executionId"]
    with ceilings.within(30, "a service without readiness to be ready"):
        assert (await wait_ready(wb, eid))["execution"]["ready"] is True
    with ceilings.within(30, "the leader's end to be noted"):
        async with wb.client.stream("GET", f"/v1/executions/{eid}/events/stream") as response:
            async for frame in frames(response):
                if frame.comment is None and "lives on" in (frame.json["message"] or ""):
                    break
    assert (await wb.client.get(f"/v1/executions/{eid}")).json()["status"] == "running"
    sleepers = procs.processes_mentioning(eid)
    assert sleepers and all(procs.alive(p) for p in sleepers)
    final = await cancel(wb, eid)
    assert final["status"] == "cancelled"
    await procs.eventually(lambda: not any(procs.alive(p) for p in sleepers), within_s=10)


async def test_a_service_ends_with_its_tree_and_its_leaders_exit_code(wb: DaemonHandle) -> None:
    started = await start_service(wb, "(sleep 0.5; echo child done) & exit 3")
    with ceilings.within(30, "a service whose tree ends to end"):
        final = await wb.wait(started["executionId"])
    assert (final["status"], final["exitCode"]) == ("failed", 3)
    output = "".join(e["outputDelta"] or "" for e in await wb.events(started["executionId"]))
    assert "child done" in output
    timed = await start_service(wb, "sleep 60", timeoutMs=500)
    assert timed["timeoutMs"] == 500 and timed["deadlineAt"] is not None
    with ceilings.within(30, "a service past its explicit deadline to end"):
        assert (await wb.wait(timed["executionId"]))["status"] == "timed_out"


async def test_a_log_pattern_makes_it_ready(wb: DaemonHandle) -> None:
    command = "echo booting; sleep 0.3; echo 'Listening on :8000' >&2; sleep 60"
    started = await start_service(wb, command, readiness={"logPattern": r"Listening on :\d+"})
    eid = started["executionId"]
    with ceilings.within(30, "a log-pattern service to be ready"):
        waited = await wait_ready(wb, eid)
    assert waited["execution"]["ready"] is True
    # The record of a wait carries its preview, as every record of a start, GET and wait does.
    assert waited["execution"]["preview"]["stdout"] == "booting\n", waited
    assert "Listening on :8000" in waited["execution"]["preview"]["stderr"]
    events = await wb.events(eid)
    ready = next(e for e in events if e["eventType"] == "ready")
    assert "Listening on :8000" in ready["message"]
    assert [e["eventType"] for e in events].index("ready") > 0
    assert (await cancel(wb, eid))["status"] == "cancelled"


async def test_not_ready_in_time_is_timed_out_and_killed(wb: DaemonHandle) -> None:
    started = await start_service(
        wb, "sleep 60", readiness={"logPattern": "never printed"}, readyTimeoutMs=300
    )
    eid = started["executionId"]
    with ceilings.within(30, "a service that is never ready to be ended"):
        final = await wb.wait(eid)
    assert final["status"] == "timed_out" and final["error"]["code"] == "ready_timeout"
    assert final["ready"] is False
    await procs.eventually(lambda: procs.processes_mentioning(eid) == [], within_s=10)


async def test_a_wait_until_ready_of_a_plain_execution_waits_for_its_end(wb: DaemonHandle) -> None:
    started = await wb.start("sleep 0.2; echo done")
    waited = await wait_ready(wb, started["executionId"])
    assert waited["execution"]["status"] == "completed" and waited["execution"]["ready"] is None
    assert waited["execution"]["preview"]["stdout"] == "done\n", waited
    died = await start_service(wb, "sleep 0.2; echo oops; echo bad >&2; exit 2", readiness={"port": 9})
    ended = await wait_ready(wb, died["executionId"])
    assert ended["execution"]["status"] == "failed", ended
    assert ended["execution"]["preview"]["stdout"] == "oops\n"
    assert ended["execution"]["preview"]["stderr"] == "bad\n"
    assert waited["waitTimedOut"] is False
    service = await start_service(wb, "sleep 60", readiness={"logPattern": "x"})
    short = await wait_ready(wb, service["executionId"], wait_ms=100)
    assert short["waitTimedOut"] is True and short["execution"]["ready"] is False
    await cancel(wb, service["executionId"])


async def test_service_fields_are_checked_and_the_listing_filters_services(wb: DaemonHandle) -> None:
    bad_bodies: list[dict[str, Any]] = [
        {"command": "true", "readiness": {"port": 8000}},  # needs service
        {"command": "true", "service": True, "readiness": {}},
        {"command": "true", "service": True, "readiness": {"port": 8000, "logPattern": "x"}},
        {"command": "true", "service": True, "readiness": {"port": 70000}},
        {"command": "true", "service": True, "readiness": {"logPattern": "("}},
        {"command": "true", "service": True, "readyTimeoutMs": 1000},  # needs readiness
        {"command": "true", "service": "yes"},
    ]
    for body in bad_bodies:
        response = await wb.client.post("/v1/executions/workbench_bash", json={**body, "background": True})
        assert response.status_code == 422, (body, response.text)
    code = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "bash", "code": "true", "service": True}
    )
    assert code.status_code == 422
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    service = await start_service(wb, "sleep 60")
    plain = await wb.run("true")
    services = (await wb.client.get("/v1/executions", params={"service": "true"})).json()["executions"]
    others = (await wb.client.get("/v1/executions", params={"service": "false"})).json()["executions"]
    assert [e["executionId"] for e in services] == [service["executionId"]]
    assert [e["executionId"] for e in others] == [plain["executionId"]]
    assert plain["service"] is False and plain["ready"] is None and plain["timeoutMs"] == 3_600_000
    assert (await wb.client.get("/v1/executions", params={"service": "maybe"})).status_code == 400
    await cancel(wb, service["executionId"])


async def test_a_sandboxed_service_is_ready_in_its_own_network_namespace(wb: DaemonHandle) -> None:
    """On the `sandbox` image the server listens inside the sandbox's own loopback, while its
    bubblewrap leader stays in the daemon's namespace: readiness looks in the tree's."""
    images = {i["name"]: i for i in (await wb.client.get("/v1/images")).json()["images"]}
    if not images["sandbox"]["available"]:
        import pytest

        pytest.skip(images["sandbox"]["unavailableReason"])
    port = free_port()
    command = f"exec python3 -m http.server {port} --bind 127.0.0.1"
    started = await start_service(wb, command, image="sandbox", readiness={"port": port})
    with ceilings.within(40, "a sandboxed service to be ready"):
        waited = await wait_ready(wb, started["executionId"])
    assert waited["execution"]["ready"] is True and waited["execution"]["status"] == "running"
    assert not listening(port)  # its loopback is its own
    assert (await cancel(wb, started["executionId"]))["status"] == "cancelled"
