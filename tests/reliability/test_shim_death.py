"""A dead shim is replaced while the daemon runs; its trees are taken back like after a crash.

Promise 1 (nothing is lost) and promise 6 (a restart is not a failure), for the restart of the
sandbox's shim rather than of the daemon: SIGKILL it under running and queued executions.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from typing import Any

import pytest

import sandbox
from tests import procs
from tests.reliability.conftest import DaemonProcess

CAPS = sandbox.detect()

Factory = Any


def wait_for(predicate: Any, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def shim_pid(d: DaemonProcess) -> int:
    return int((d.data_dir / "run" / "shim.pid").read_text().strip())


def kill_shim(d: DaemonProcess) -> int:
    pid = shim_pid(d)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not procs.alive(pid))
    return pid


def health(d: DaemonProcess) -> tuple[int, dict[str, Any]]:
    response = d.client.get("/healthz")
    body: dict[str, Any] = response.json()
    return response.status_code, body


def test_a_killed_shim_is_replaced_and_nothing_is_lost(daemon_process: Factory) -> None:
    """Promises 1 and 6: running trees are taken back, queued ones run, later starts work."""
    d: DaemonProcess = daemon_process(WORKBENCH_MAX_CONCURRENT_EXECUTIONS="1")
    d.start()
    running = d.start_bash("echo start; sleep 1.5; echo end")["executionId"]
    queued = d.start_bash("echo queued")["executionId"]
    wait_for(lambda: d.get(running)["status"] == "running" and "start" in d.output(running))
    assert d.get(queued)["status"] == "queued"
    old = kill_shim(d)
    began = time.monotonic()
    after = d.client.post(
        "/v1/executions/workbench_bash", json={"command": "echo after", "waitTimeoutMs": 30_000}
    ).json()
    took = time.monotonic() - began
    # One slot: this start runs after the running and the queued one (the figure is theirs).
    print(f"first start after the shim kill, behind the one slot's queue, completed in {took:.3f} s")
    assert after["status"] == "completed", after
    assert d.output(after["executionId"]) == "after\n"
    first = d.wait(running)
    # Its tree lived on and was taken back: all its output is there, but its exit status died
    # with the shim that was its parent.
    assert d.output(running) == "start\nend\n"
    assert first["status"] == "failed" and first["error"]["code"] == "lost", first
    second = d.wait(queued)
    assert second["status"] == "completed" and d.output(queued) == "queued\n"
    assert shim_pid(d) != old
    assert health(d)[0] == 200
    assert procs.processes_mentioning(running) == []


def test_a_start_right_after_a_shim_kill_runs_on_the_new_shim(daemon_process: Factory) -> None:
    """Promise 1: with slots free, a start sent as the shim dies runs on its replacement (the
    figure printed is the time from the kill to its end)."""
    d: DaemonProcess = daemon_process()
    d.start()
    running = d.start_bash("echo start; sleep 30")["executionId"]
    wait_for(lambda: "start" in d.output(running))
    old = kill_shim(d)
    began = time.monotonic()
    after = d.client.post(
        "/v1/executions/workbench_bash", json={"command": "echo after", "waitTimeoutMs": 30_000}
    ).json()
    print(f"a start sent as the shim was killed completed in {time.monotonic() - began:.3f} s")
    assert after["status"] == "completed" and d.output(after["executionId"]) == "after\n", after
    assert shim_pid(d) != old and d.get(running)["status"] == "running"
    d.client.post(f"/v1/executions/{running}/cancel", json={})
    assert d.wait(running)["status"] == "cancelled"
    assert procs.processes_mentioning(running) == []


def test_a_tree_whose_shim_died_is_killed_on_cancel(daemon_process: Factory) -> None:
    """Promise 3 across a shim replacement: the taken-back tree is still cancellable."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 300 & setsid sleep 301 & wait")["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running" and len(procs.processes_mentioning(eid)) >= 3)
    kill_shim(d)
    wait_for(lambda: health(d)[0] == 200)
    response = d.client.post(f"/v1/executions/{eid}/cancel", json={"reason": "test"})
    assert response.status_code == 202, response.text
    final = d.wait(eid)
    assert final["status"] == "cancelled"
    assert procs.processes_mentioning(eid) == []


def test_healthz_reports_degraded_while_the_shim_is_being_replaced(daemon_process: Factory) -> None:
    """While no shim can be started (its lock held here), /healthz says so; then it recovers."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 1; echo done")["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    lock = os.open(d.data_dir / "run" / "shim.lock", os.O_RDWR)
    try:
        pid = shim_pid(d)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not procs.alive(pid))
        # The dead shim's lock is free: take it, so that no new shim can start yet.
        fcntl.flock(lock, fcntl.LOCK_EX)
        wait_for(lambda: health(d)[0] == 503)
        _code, body = health(d)
        assert body["status"] == "degraded" and "shim" in body["reason"], body
    finally:
        os.close(lock)
    wait_for(lambda: health(d)[0] == 200)
    assert health(d)[1]["status"] == "ok"
    final = d.wait(eid)
    assert final["status"] == "failed" and final["error"]["code"] == "lost"
    assert d.output(eid) == "done\n"
    assert d.wait(d.start_bash("true")["executionId"])["status"] == "completed"


#: Under cgroup a tree also gets a pid namespace where the machine allows it.
CGROUP_HAS_PIDNS = CAPS.cgroup and CAPS.pidns


@pytest.mark.parametrize(
    "containment",
    ["pidns", pytest.param("cgroup", marks=pytest.mark.skipif(not CGROUP_HAS_PIDNS, reason="no pidns"))],
)
def test_an_execution_cannot_kill_its_shim_where_it_is_outside_the_tree(
    daemon_process: Factory, containment: str
) -> None:
    """`kill -9 $PPID` from a host execution: under pidns, and cgroup with a pid namespace, the
    shim is outside the tree's pid namespace (no $PPID to reach), so it lives; the execution is
    unaffected."""
    d: DaemonProcess = daemon_process(WORKBENCH_CONTAINMENT=containment)
    d.start()
    pid = shim_pid(d)
    # `kill -9 0` would be the tree's own process group: only a reachable parent is killed.
    eid = d.start_bash('echo ppid=$PPID; [ "$PPID" = 0 ] || kill -9 $PPID; echo still')["executionId"]
    final = d.wait(eid)
    assert procs.alive(pid), "the shim was killed by an execution"
    assert final["containment"] == containment and final["status"] == "completed"
    assert d.output(eid) == "ppid=0\nstill\n"


@pytest.mark.parametrize(
    "containment",
    ["pgroup", pytest.param("cgroup", marks=pytest.mark.skipif(CGROUP_HAS_PIDNS, reason="out of reach"))],
)
def test_an_execution_that_kills_its_shim_ends_lost_and_the_daemon_goes_on(
    daemon_process: Factory, containment: str
) -> None:
    """Under pgroup (and cgroup without pid namespaces) the shim is reachable: `kill -9 $PPID`
    kills it; the daemon replaces it. (The sleep first: a shim killed before its answer to the
    spawn reached the daemon leaves a tree the daemon cannot know, see the README.)"""
    d: DaemonProcess = daemon_process(WORKBENCH_CONTAINMENT=containment)
    d.start()
    final = d.wait(d.start_bash("sleep 0.3; kill -9 $PPID; sleep 0.5; echo still")["executionId"])
    assert final["status"] == "failed" and final["error"]["code"] == "lost", final
    assert d.wait(d.start_bash("true")["executionId"])["status"] == "completed"
