"""Promise 6 for interactive executions: the shim holds stdin and the terminal, so a daemon SIGKILL
loses neither; the restarted daemon adopts the tree and it keeps taking input."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.reliability.conftest import DaemonProcess

Factory = Any


def wait_for(predicate: Any, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _running(d: DaemonProcess, command: str, **body: Any) -> str:
    eid: str = d.start_bash(command, **body)["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    return eid


def _input(d: DaemonProcess, eid: str, **body: Any) -> None:
    response = d.client.post(f"/v1/executions/{eid}/input", json=body)
    assert response.status_code == 204, response.text


@pytest.mark.parametrize("mode", ["openStdin", "tty"])
def test_input_survives_a_daemon_sigkill(daemon_process: Factory, mode: str) -> None:
    """Promise 6 (adopted): stdin or the terminal outlives the daemon; input after the restart
    reaches the same process, whose output continues in the journal."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = _running(d, 'while read -r line; do echo "got $line"; done; echo bye', **{mode: True})
    _input(d, eid, data="one\n")
    wait_for(lambda: "got one" in d.output(eid))
    d.kill9()
    d.start()
    wait_for(lambda: d.get(eid)["capabilities"]["interactive"] == ("tty" if mode == "tty" else "stdin"))
    _input(d, eid, data="two\n")
    wait_for(lambda: "got two" in d.output(eid))
    _input(d, eid, data="", eof=True)
    final = d.wait(eid)
    assert (final["status"], final["exitCode"]) == ("completed", 0)
    out = d.output(eid).replace("\r\n", "\n")
    assert out.endswith("got two\nbye\n") and out.count("got one") == 1
    events = d.events(eid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert [e["inputDelta"] for e in events if e["eventType"] == "input"] == ["one\n", "two\n", ""]
