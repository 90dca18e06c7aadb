"""Many daemons, one PostgreSQL journal, through faults: the database away for longer than the
lease, and a node whose owner is dead asked for what only a living owner answers.

Each test that stops PostgreSQL runs on a server of its own, so that no other test sees it go.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import pg
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import LEASE_MS, nodes

Factory = Callable[..., DaemonProcess]


@pytest.fixture
def own_server() -> Iterator[pg.PostgresServer]:
    """A PostgreSQL server of the test's own, which it may stop and start."""
    if pg.pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (scripts/test installs it: apt-get install postgresql)")
    server = pg.PostgresServer()
    try:
        yield server
    finally:
        server.close()


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
