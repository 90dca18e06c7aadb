"""Input, resizes and signals go to the node that runs the execution: another node's `409` names
that node (in its message and in `details`), instead of saying the running execution is not
running."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import pg
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import nodes

Factory = Callable[..., DaemonProcess]


@pytest.mark.timeout(120)
def test_input_resize_and_signal_on_another_node_name_the_node_that_runs_it(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    made = nodes(daemon_process, postgres_server, tmp_path, "AB", lease_ms=60_000)
    a, b = made["A"], made["B"]
    eid = a.start_bash("cat", node="A", tty=True)["executionId"]
    deadline = time.monotonic() + 20
    while a.get(eid)["status"] != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    asks = {
        "input": ("input", {"data": "hello\n"}),
        "resize": ("resize", {"rows": 30, "cols": 100}),
        "signal": ("signal", {"signal": "INT"}),
    }
    for what, (route, body) in asks.items():
        response = b.client.post(f"/v1/executions/{eid}/{route}", json=body)
        assert response.status_code == 409, response.text
        error = response.json()["error"]
        assert error["code"] == "conflict"
        assert "runs on node 'A'" in error["message"] and "is running" not in error["message"], error
        assert what in error["message"], error
        assert error["details"] == {"nodeId": "A"}, error
        assert a.client.post(f"/v1/executions/{eid}/{route}", json=body).status_code in (202, 204)
    a.client.post(f"/v1/executions/{eid}/cancel", json={})
    assert a.wait(eid)["status"] in ("cancelled", "completed", "failed")  # INT ended cat
