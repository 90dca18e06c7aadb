"""An execution deleted through another node leaves nothing on the disk of the node that ran it:
its directory (spool files, artifacts) goes within moments, or at that node's next start when it
was down meanwhile."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import pg
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import nodes

Factory = Callable[..., DaemonProcess]


def _ran_on_a(a: DaemonProcess) -> tuple[str, Path]:
    """An execution A ran to its end, and its directory on A's disk with its stdout artifact
    (output that is not UTF-8 is kept whole)."""
    eid = a.start_bash("printf 'kept \\377\\n'", node="A")["executionId"]
    assert a.wait(eid)["status"] == "completed"
    directory = a.data_dir / "executions" / eid
    assert (directory / "stdout").exists()
    return eid, directory


def _gone(directory: Path, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while directory.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not directory.exists()


@pytest.mark.timeout(120)
def test_a_delete_or_prune_on_b_removes_the_directories_on_a(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    made = nodes(daemon_process, postgres_server, tmp_path, "AB", lease_ms=60_000)
    a, b = made["A"], made["B"]
    eid, directory = _ran_on_a(a)
    live = a.start_bash("sleep 30", node="A")["executionId"]
    assert b.client.delete(f"/v1/executions/{eid}").status_code == 204
    assert _gone(directory), "A removes the directory of an execution deleted through B"
    pruned = [_ran_on_a(a) for _ in range(3)]
    response = b.client.delete("/v1/executions", params={"status": "completed"})
    assert response.status_code == 200 and response.json()["deleted"] == 3, response.text
    for _, directory in pruned:
        assert _gone(directory), "A removes the directories of executions pruned through B"
    assert (a.data_dir / "executions" / live).is_dir(), "a live execution's directory stays"
    a.client.post(f"/v1/executions/{live}/cancel", json={})


@pytest.mark.timeout(120)
def test_a_node_down_during_the_delete_removes_the_directory_at_its_next_start(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    made = nodes(daemon_process, postgres_server, tmp_path, "AB", lease_ms=60_000)
    a, b = made["A"], made["B"]
    eid, directory = _ran_on_a(a)
    kept, kept_directory = _ran_on_a(a)
    assert a.stop() == 0
    assert b.client.delete(f"/v1/executions/{eid}").status_code == 204
    assert directory.exists()
    a.start()
    assert not directory.exists(), "A's start removes what was deleted while it was down"
    assert (kept_directory / "stdout").exists(), "an execution that exists keeps its directory"
    assert a.get(kept)["status"] == "completed"
