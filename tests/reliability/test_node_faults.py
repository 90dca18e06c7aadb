"""Many daemons, one PostgreSQL journal, through faults: the database away for longer than the
lease, a second daemon started with a living node's id, and a node whose owner is dead asked for
what only a living owner answers.

Each test that stops PostgreSQL runs on a server of its own, so that no other test sees it go.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import pg
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import LEASE_MS, nodes

Factory = Callable[..., DaemonProcess]


@pytest.fixture
def own_server() -> Iterator[pg.PostgresServer]:
    """A PostgreSQL server of the test's own, which it may stop and start."""
    with pg.running_server() as server:
        yield server


def _wait_running(node: DaemonProcess, execution_id: str, within_s: float = 20) -> None:
    deadline = time.monotonic() + within_s
    while node.get(execution_id)["status"] != "running":
        assert time.monotonic() < deadline, node.get(execution_id)
        time.sleep(0.02)


@pytest.mark.timeout(180)
def test_a_database_outage_longer_than_the_lease_loses_no_living_node(
    own_server: pg.PostgresServer, daemon_process: Factory, tmp_path: Path
) -> None:
    """PostgreSQL is away for twice the lease while every node runs an execution: when it is
    back, every node beats again before any may take another for lost, and all complete."""
    n = nodes(daemon_process, own_server, tmp_path, "abc")
    command = "for i in $(seq 1 40); do echo n$i; sleep 0.2; done"
    started = {name: node.start_bash(command, node=name)["executionId"] for name, node in n.items()}
    for name, execution_id in started.items():
        _wait_running(n[name], execution_id)
    own_server.stop()
    time.sleep(LEASE_MS * 2 / 1000)
    own_server.start()
    expected = "".join(f"n{i}\n" for i in range(1, 41))
    for name, execution_id in started.items():
        final = n["a"].wait(execution_id)
        assert (final["status"], final["exitCode"], final["nodeId"]) == ("completed", 0, name), final
        assert n["a"].output(execution_id) == expected


@pytest.mark.timeout(120)
def test_a_second_daemon_with_a_living_node_s_id_is_refused_and_the_node_runs_on(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """A daemon of another data dir started as node "a" while "a" beats is refused with one
    line and exit status 2, before it touches the store's sessions: "a" runs on undisturbed."""
    a = nodes(daemon_process, postgres_server, tmp_path, "a", lease_ms=15_000)["a"]
    execution_id = a.start_bash("sleep 3; echo done", node="a")["executionId"]
    _wait_running(a, execution_id)
    twin_dir = tmp_path / "node-a-twin"
    twin = daemon_process(twin_dir, **{**a.env, "WORKBENCH_DATA_DIR": str(twin_dir)})
    proc = twin.start(wait=False)
    try:
        status = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        status = None
    said = [line for line in twin.log_text().splitlines() if line.startswith("workbench: ")]
    assert status == 2, twin.log_text()
    assert len(said) == 1 and "WORKBENCH_NODE_ID" in said[0] and "'a'" in said[0], said
    final = a.wait(execution_id)
    assert (final["status"], final["exitCode"], final["nodeId"]) == ("completed", 0, "a"), final
    assert a.output(execution_id) == "done\n"


def _kill_node(node: DaemonProcess) -> None:
    """SIGKILL a node's daemon and its shim: the node is dead, its heartbeat stops."""
    assert node.proc is not None
    os.kill(int((node.data_dir / "run" / "shim.pid").read_text().strip()), signal.SIGKILL)
    node.proc.kill()
    node.proc.wait()


@pytest.mark.timeout(120)
def test_a_cancel_asked_of_another_node_while_its_owner_is_dead_is_recorded_at_once(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """B is asked to cancel what dead A ran: `202 cancel_requested` at once, not after A's lease;
    once A is found lost the execution ends `cancelled` with the reason, `error.code` saying why
    nothing was seen to end. The same for the cancel of a foreground start's expired wait."""
    n = nodes(daemon_process, postgres_server, tmp_path, "ab", lease_ms=6000)
    a, b = n["a"], n["b"]
    command = "for i in $(seq 1 600); do echo n$i; sleep 0.1; done"
    execution_id = a.start_bash(command, node="a")["executionId"]
    _wait_running(a, execution_id)
    body = {"command": command, "node": "a", "waitTimeoutMs": 3000, "onWaitTimeout": "cancel"}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        foreground = pool.submit(b.client.post, "/v1/executions/workbench_bash", json=body, timeout=60)
        listed: list[dict[str, Any]] = []
        deadline = time.monotonic() + 20
        while not [e for e in listed if e["status"] == "running" and e["executionId"] != execution_id]:
            assert time.monotonic() < deadline, listed
            listed = b.client.get("/v1/executions").json()["executions"]
            time.sleep(0.05)
        _kill_node(a)
        try:
            began = time.monotonic()
            response = b.client.post(f"/v1/executions/{execution_id}/cancel", json={"reason": "stop it"})
            took_s = time.monotonic() - began
            answered = foreground.result()
            final = b.wait(execution_id)
        finally:
            a.start()  # kills the trees A's death left, which were ended without it
    assert response.status_code == 202, response.text
    assert response.json()["cancelled"] is True
    assert response.json()["execution"]["status"] == "cancel_requested"
    assert took_s < 2.0, took_s
    assert (final["status"], final["cancelReason"], final["error"]["code"]) == (
        "cancelled",
        "stop it",
        "node_lost",
    )
    assert answered.status_code == 201, answered.text
    ended = answered.json()
    assert (ended["status"], ended["error"]["code"]) == ("cancelled", "node_lost"), ended
    assert ended["cancelReason"] == "the wait of 3000 ms passed (onWaitTimeout: cancel)"


@pytest.mark.timeout(120)
def test_a_lost_node_s_execution_keeps_its_journaled_output_in_its_preview_and_exit(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """The node that ends a dead node's execution has none of its files: the final preview and
    the exit's tails are made from the output the journal holds, as the files would give them."""
    n = nodes(daemon_process, postgres_server, tmp_path, "ab")
    a, b = n["a"], n["b"]
    output = "for i in $(seq 1 30); do echo out$i; echo err$i >&2; done"
    # The same output, ended on its own node: its preview is made from its files.
    local = b.wait(b.start_bash(output, node="b", previewBytes=64)["executionId"])
    execution_id = a.start_bash(f"{output}; sleep 60", node="a", detached=True, previewBytes=64)[
        "executionId"
    ]
    deadline = time.monotonic() + 20
    while "err30" not in a.output(execution_id, "stderr") or "out30" not in a.output(execution_id):
        assert time.monotonic() < deadline, a.events(execution_id)
        time.sleep(0.05)
    _kill_node(a)
    try:
        final = b.wait(execution_id, wait_ms=20_000)
        exits = b.client.get("/v1/exits", params={"waitTimeoutMs": 5000}).json()["exits"]
    finally:
        a.start()  # kills the tree A's death left, which was ended without it
    assert (final["status"], final["error"]["code"]) == ("failed", "node_lost"), final
    assert final["output"] == local["output"]
    assert final["preview"]["stdoutElidedBytes"] > 0
    assert final["preview"] == local["preview"]
    stdout, stderr = b.output(execution_id), b.output(execution_id, "stderr")
    assert stdout.endswith("out30\n") and stderr.endswith("err30\n")
    assert [(e["executionId"], e["stdoutTail"], e["stderrTail"]) for e in exits] == [
        (execution_id, stdout, stderr)
    ], exits


@pytest.mark.timeout(120)
def test_a_cancel_from_another_node_while_the_owner_kills_a_timed_out_tree_still_ends_it(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """A's deadline passed and A is killing the tree (SIGTERM ignored: the deadline's grace)
    when B records a cancel: `cancel_requested` leads to no timeout, so the end is the cancel's."""
    n = nodes(daemon_process, postgres_server, tmp_path, "ab", lease_ms=15_000)
    a, b = n["a"], n["b"]
    started = time.monotonic()
    execution_id = a.start_bash("trap '' TERM; sleep 30", node="a", timeoutMs=1000)["executionId"]
    _wait_running(a, execution_id)
    time.sleep(max(0.0, started + 1.6 - time.monotonic()))  # past the deadline, within its 2 s grace
    response = b.client.post(f"/v1/executions/{execution_id}/cancel", json={"reason": "late"})
    assert response.status_code in (200, 202), response.text
    final = b.wait(execution_id, wait_ms=15_000)
    if response.status_code == 200:  # the grace was already over: the timeout's end stands
        assert final["status"] == "timed_out", final
        return
    assert (final["status"], final["cancelReason"], final["error"]) == ("cancelled", "late", None), final
