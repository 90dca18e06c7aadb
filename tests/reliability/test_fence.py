"""A node's start on PostgreSQL ends the sessions its earlier run left before it reads the store.

A daemon killed while its COMMIT was on the way leaves a session whose transaction the server may
still commit after the next start has read the store. The test stands in for such a session: a
connection under the node's session name, with an uncommitted change to the execution's row (and
its lock) still open when the daemon is killed. The next start must end it before recovery reads
(else recovery reads around it, and its adoption waits on the row's lock for the lock timeout).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests import pg
from tests.reliability.conftest import DaemonProcess
from workbench.core.store.postgres_schema import node_url

Factory = Callable[..., DaemonProcess]


@pytest.mark.timeout(120)
def test_a_start_ends_the_sessions_of_the_nodes_earlier_run_before_it_reads(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """Promise 6 on PostgreSQL: recovery reads what the killed run committed, all of it."""
    url = postgres_server.url_for(tmp_path / "store")
    d = daemon_process(tmp_path / "node", WORKBENCH_STORE_URL=url, WORKBENCH_NODE_ID="fenced")
    d.start()
    eid = d.start_bash("sleep 30")["executionId"]
    deadline = time.monotonic() + 10
    while d.client.get(f"/v1/executions/{eid}").json()["status"] != "running":
        assert time.monotonic() < deadline, "not running within 10 s"
        time.sleep(0.02)
    with psycopg.connect(node_url(url, "fenced")) as zombie:
        # The killed run's last transaction, still open on the server: a change to the row.
        zombie.execute("UPDATE executions SET metadata_json = %s WHERE id = %s", ('{"late": 1}', eid))
        d.kill9()
        began = time.monotonic()
        d.start()
        took = time.monotonic() - began
        with pytest.raises(psycopg.OperationalError):
            zombie.execute("SELECT 1")  # its session was ended by the start
    assert took < 20, f"the start waited {took:.1f} s (for the session's lock?)"
    events = d.events(eid)
    assert any("adopted after a daemon restart" in (e["message"] or "") for e in events), events
    record = d.client.get(f"/v1/executions/{eid}").json()
    assert record["status"] == "running" and record["metadata"] is None  # the change never committed
    d.client.post(f"/v1/executions/{eid}/cancel", json={})
