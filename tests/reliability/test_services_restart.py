"""Promise 6 for services: a daemon killed with SIGKILL and started again adopts its services, ready
or not yet, and a cancel after that still kills the whole tree."""

from __future__ import annotations

import socket
import sys
import time
from typing import Any

import httpx

from tests import procs
from tests.ports import free_port
from tests.reliability.conftest import DaemonProcess

Factory = Any
PYTHON = sys.executable


def answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_ready(d: DaemonProcess, execution_id: str) -> dict[str, Any]:
    response = d.client.post(
        f"/v1/executions/{execution_id}/wait", json={"until": "ready", "waitTimeoutMs": 30_000}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def cancel_and_check(d: DaemonProcess, execution_id: str, port: int) -> None:
    tree = procs.processes_mentioning(execution_id)
    response = d.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    assert response.status_code == 202, response.text
    assert d.wait(execution_id)["status"] == "cancelled"
    deadline = time.monotonic() + 10
    while any(procs.alive(p) for p in tree):
        assert time.monotonic() < deadline, procs.describe(tree)
        time.sleep(0.02)
    assert not listening(port)


def test_a_ready_service_is_adopted_across_a_daemon_sigkill(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    port = free_port()
    # The leader exits at once; the server it left in the background is the service.
    command = f"{PYTHON} -m http.server {port} --bind 127.0.0.1 & echo started"
    eid = d.start_bash(command, service=True, readiness={"port": port})["executionId"]
    assert wait_ready(d, eid)["execution"]["ready"] is True
    d.kill9()
    assert answers(port)  # the daemon is down; the service is not
    d.start()
    record = d.get(eid)
    assert (record["status"], record["ready"]) == ("running", True)
    waited = wait_ready(d, eid)
    assert waited["waitTimedOut"] is False and waited["execution"]["ready"] is True
    assert answers(port)
    events = d.events(eid)
    assert any("adopted after a daemon restart" in (e["message"] or "") for e in events)
    assert [e["eventType"] for e in events].count("ready") == 1
    time.sleep(0.5)  # adopted, it is not ended for its leader's earlier exit
    assert d.get(eid)["status"] == "running" and answers(port)
    cancel_and_check(d, eid, port)


def test_a_service_not_ready_yet_becomes_ready_after_the_restart(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    port = free_port()
    command = f"sleep 2; exec {PYTHON} -m http.server {port} --bind 127.0.0.1"
    eid = d.start_bash(command, service=True, readiness={"port": port}, readyTimeoutMs=60_000)["executionId"]
    deadline = time.monotonic() + 30
    while d.get(eid)["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    d.kill9()
    d.start()
    waited = wait_ready(d, eid)
    ready = waited["waitTimedOut"] is False and waited["execution"]["ready"] is True
    assert ready, (waited, d.events(eid))
    assert answers(port)
    cancel_and_check(d, eid, port)


def test_a_service_whose_leader_ends_while_the_daemon_is_down_lives_on(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    port = free_port()
    command = f"{PYTHON} -m http.server {port} --bind 127.0.0.1 & sleep 1.5; exit 0"
    eid = d.start_bash(command, service=True, readiness={"port": port})["executionId"]
    assert wait_ready(d, eid)["execution"]["ready"] is True
    d.kill9()
    time.sleep(2)  # the leader exits meanwhile; its server does not
    d.start()
    time.sleep(0.5)
    assert d.get(eid)["status"] == "running" and answers(port)
    cancel_and_check(d, eid, port)


def wait_running(d: DaemonProcess, execution_id: str) -> None:
    deadline = time.monotonic() + 30
    while d.get(execution_id)["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_service_ready_while_the_daemon_was_down_is_ready_after_its_deadline(
    daemon_process: Factory,
) -> None:
    """Its ready deadline passed while no daemon watched: the restarted daemon looks once before
    judging it, and a service ready by then (its output matched, its port listens) is ready."""
    d: DaemonProcess = daemon_process()
    d.start()
    port = free_port()
    logged = d.start_bash(
        "sleep 0.5; echo READY-G; sleep 300",
        service=True,
        readiness={"logPattern": "READY-G"},
        readyTimeoutMs=2000,
    )["executionId"]
    command = f"sleep 0.5; exec {PYTHON} -m http.server {port} --bind 127.0.0.1"
    listens = d.start_bash(command, service=True, readiness={"port": port}, readyTimeoutMs=2000)[
        "executionId"
    ]
    wait_running(d, logged)
    wait_running(d, listens)
    d.kill9()
    time.sleep(3)  # both become ready, and both ready deadlines pass, while the daemon is down
    d.start()
    for eid in (logged, listens):
        waited = wait_ready(d, eid)
        assert waited["execution"]["ready"] is True, (waited, d.events(eid))
    time.sleep(0.5)
    for eid in (logged, listens):
        record = d.get(eid)
        assert (record["status"], record["error"]) == ("running", None), d.events(eid)
    assert answers(port)
    cancel_and_check(d, listens, port)
    assert d.client.post(f"/v1/executions/{logged}/cancel", json={}).status_code == 202
    assert d.wait(logged)["status"] == "cancelled"


def test_a_service_not_ready_when_its_deadline_passed_while_down_times_out(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 300", service=True, readiness={"logPattern": "NEVER"}, readyTimeoutMs=1000)[
        "executionId"
    ]
    wait_running(d, eid)
    d.kill9()
    time.sleep(1.5)
    d.start()
    final = d.wait(eid)
    assert (final["status"], final["error"]["code"]) == ("timed_out", "ready_timeout"), final
    assert procs.processes_mentioning(eid) == []
