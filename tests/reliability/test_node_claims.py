"""A node cut off between its spawn and its `running` commit: another node runs the execution.

Node A takes an execution and asks its shim to spawn it; A is then stopped (SIGSTOP) longer than
its lease, so B puts A's uncommitted claim back in the queue, claims it and runs it. When A comes
back, its spawn completes: the tree it started must be killed at once, and nothing of it (its
output, its end) may be written into B's run.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import pg, procs
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import nodes

Factory = Callable[..., DaemonProcess]


def _shim_pid(data_dir: Path) -> int:
    return int((data_dir / "run" / "shim.pid").read_text().strip())


def _tree_on(node: DaemonProcess, execution_id: str) -> list[int]:
    """The processes of `execution_id` that `node` runs (in its workspace: both nodes are here)."""
    found = []
    for pid in procs.processes_mentioning(execution_id):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(node.data_dir) + "/"):
            found.append(pid)
    return found


def _wait_for(what: str, check: Callable[[], bool], within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"not within {within_s} s: {what}"
        time.sleep(0.02)


@pytest.mark.timeout(120)
def test_a_claim_taken_while_its_node_was_cut_off_is_not_run_into_the_new_owner_s_record(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    n = nodes(daemon_process, postgres_server, tmp_path, "ab")
    a, b = n["a"], n["b"]
    assert a.proc is not None
    marks = tmp_path / "marks"
    command = f"echo out; echo run >> {marks}; sleep 4; echo end >> {marks}"
    shim = _shim_pid(a.data_dir)
    stopped = [shim]
    os.kill(shim, signal.SIGSTOP)  # A's spawn waits for its shim
    try:
        record = a.start_bash(command)
        execution_id = record["executionId"]
        assert a.get(execution_id)["nodeId"] == "a"
        os.kill(a.proc.pid, signal.SIGSTOP)  # and A stops beating: its lease lapses
        stopped.append(a.proc.pid)

        def taken_by_b() -> bool:
            found = b.get(execution_id)
            return found["nodeId"] == "b" and found["status"] in ("running", "completed")

        _wait_for("B runs the execution", taken_by_b, 30)
    finally:
        for pid in reversed(stopped):
            os.kill(pid, signal.SIGCONT)
    resumed = time.monotonic()
    # A's spawn completes once its shim goes on; its `running` is refused (the claim is B's), so
    # A kills the tree it started, before its `sleep 4` ends, and records nothing of it.
    _wait_for("A says why", lambda: "another node took its claim" in a.log.read_text(errors="replace"), 20)
    _wait_for("A has killed its tree", lambda: _tree_on(a, execution_id) == [], 10)
    final = b.wait(execution_id)
    assert (final["status"], final["exitCode"], final["nodeId"]) == ("completed", 0, "b"), final
    time.sleep(max(0.0, resumed + 5 - time.monotonic()))
    assert marks.read_text().count("end") == 1, marks.read_text()
    assert b.output(execution_id) == "out\n"
    assert a.get(execution_id) == b.get(execution_id)
    assert b.get(execution_id)["status"] == "completed"
    assert "node_lost" not in str(b.events(execution_id))
