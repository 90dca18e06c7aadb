"""Promise 6 for code contexts: a daemon killed with SIGKILL and started again takes its contexts
back (the shim held their interpreters) with their names, finishes the cell that ran meanwhile
with its real outcome and output, runs what was queued, and finds a context whose interpreter
died meanwhile `dead`."""

from __future__ import annotations

import ast
import os
import shutil
import signal
import sqlite3
import time
from typing import Any

import httpx
import pytest

from tests import procs
from tests.procs import PYTHON_ME
from tests.reliability.conftest import DaemonProcess

Factory = Any
CODE = "/v1/executions/workbench_code"


def new_context(d: DaemonProcess) -> str:
    response = d.client.post("/v1/contexts", json={"language": "python"})
    assert response.status_code == 201 and response.json()["status"] == "ready", response.text
    context_id: str = response.json()["contextId"]
    return context_id


def start_in(d: DaemonProcess, context_id: str, code: str) -> str:
    body = {"language": "python", "code": code, "contextId": context_id, "background": True}
    response = d.client.post(CODE, json=body)
    assert response.status_code == 202, response.text
    execution_id: str = response.json()["executionId"]
    return execution_id


def until(check: Any, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.02)


def adoptions(d: DaemonProcess, execution_id: str) -> list[str]:
    """The messages of the execution's events that say it was picked up after a restart."""
    said = (e["message"] or "" for e in d.events(execution_id) if e["eventType"] == "status")
    return [message for message in said if "restart" in message]


def gated(gate: Any) -> str:
    """A cell that prints, waits for the file `gate`, prints again and counts itself in `state`."""
    return (
        "import os, time\nprint('before', flush=True)\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        "print('after', flush=True)\nstate['n'] += 1\nstate['n']"
    )


def test_a_context_is_adopted_across_a_daemon_sigkill(daemon_process: Factory, tmp_path: Any) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    cx = new_context(d)
    assert d.wait(start_in(d, cx, "state = {'n': 1}"))["status"] == "completed"
    gate = tmp_path / "gate"
    running = start_in(d, cx, gated(gate))  # running when the daemon dies
    queued = start_in(d, cx, "state['n'] * 10")
    until(lambda: "before" in d.output(running))
    interpreter = procs.processes_mentioning(cx)
    assert interpreter
    d.kill9()
    gate.write_text("go")  # it finishes while no daemon is there
    d.start()
    record = d.wait(running)
    assert record["status"] == "completed" and record["result"] == {"text/plain": "2"}, record
    assert d.output(running) == "before\nafter\n"
    # Its adoption is an event of its own, as any execution's: it ended while no daemon was there.
    assert adoptions(d, running) == ["finished while the daemon was down; recorded after its restart"]
    assert d.wait(queued)["result"] == {"text/plain": "20"}
    again = d.wait(start_in(d, cx, "state"))
    assert again["result"] == {"text/plain": "{'n': 2}"}, again
    assert d.client.get(f"/v1/contexts/{cx}").json()["status"] == "ready"
    assert all(procs.alive(p) for p in interpreter)  # the very same interpreter


def test_a_cell_still_running_after_a_restart_can_be_cancelled(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    cx = new_context(d)
    running = start_in(d, cx, "print('spin', flush=True)\nwhile True: pass")
    until(lambda: "spin" in d.output(running))
    d.kill9()
    d.start()
    assert d.get(running)["status"] == "running"
    assert adoptions(d, running) == ["adopted after a daemon restart"]
    assert d.client.post(f"/v1/executions/{running}/cancel", json={}).status_code == 202
    assert d.wait(running)["status"] == "cancelled"
    assert d.wait(start_in(d, cx, "6 * 7"))["result"] == {"text/plain": "42"}


def test_an_interpreter_that_died_while_the_daemon_was_down_is_dead(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    cx = new_context(d)
    # As the host finds it (`PYTHON_ME`): in a pid namespace (cgroup, pidns) getpid() is its own.
    me = d.wait(start_in(d, cx, f"import os\n{PYTHON_ME}"))["result"]["text/plain"]
    pid = procs.host_pid(ast.literal_eval(me))
    running = start_in(d, cx, "print('spin', flush=True)\nwhile True: pass")
    queued = start_in(d, cx, "1")
    until(lambda: "spin" in d.output(running))
    d.kill9()
    os.kill(int(pid), signal.SIGKILL)
    until(lambda: not procs.alive(int(pid)))
    d.start()
    record = d.client.get(f"/v1/contexts/{cx}").json()
    assert record["status"] == "dead" and record["reason"], record
    for execution_id in (running, queued):
        ended = d.wait(execution_id)
        assert ended["status"] == "failed" and ended["error"]["code"] == "context_dead", ended
    assert d.output(running) == "spin\n"
    response = d.client.post(CODE, json={"language": "python", "code": "1", "contextId": cx})
    assert response.status_code == 409, response.text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here")
def test_a_node_context_is_adopted_across_a_daemon_sigkill(daemon_process: Factory, tmp_path: Any) -> None:
    """The same for node: the cell that ran while no daemon was there ends with its result and
    all its output, and the very same interpreter keeps its names."""
    d: DaemonProcess = daemon_process()
    d.start()
    response = d.client.post("/v1/contexts", json={"language": "node"})
    assert response.status_code == 201 and response.json()["status"] == "ready", response.text
    cx = response.json()["contextId"]

    def start(code: str) -> str:
        body = {"language": "node", "code": code, "contextId": cx, "background": True}
        started = d.client.post(CODE, json=body)
        assert started.status_code == 202, started.text
        execution_id: str = started.json()["executionId"]
        return execution_id

    assert d.wait(start("let state = { n: 1 }"))["status"] == "completed"
    gate = tmp_path / "gate"
    code = (
        "console.log('before')\n"
        f"while (!require('fs').existsSync({str(gate)!r})) await new Promise((r) => setTimeout(r, 10))\n"
        "console.log('after')\nstate.n += 1"
    )
    running = start(code)
    until(lambda: "before" in d.output(running))
    interpreter = procs.processes_mentioning(cx)
    d.kill9()
    gate.write_text("go")
    d.start()
    record = d.wait(running)
    assert record["status"] == "completed" and record["result"] == {"text/plain": "2"}, record
    assert d.output(running) == "before\nafter\n"
    assert d.wait(start("state"))["result"] == {"text/plain": "{ n: 2 }"}
    assert all(procs.alive(p) for p in interpreter)


def _as_if_never_running(d: DaemonProcess, execution_id: str) -> None:
    """The store as a crash leaves it when the cell had been handed to its interpreter but its
    `running` status (and so nothing after it) had not committed yet."""
    conn = sqlite3.connect(d.data_dir / "workbench.db")
    with conn:
        conn.execute("DELETE FROM events WHERE execution_id = ? AND sequence > 1", (execution_id,))
        conn.execute(
            "UPDATE executions SET status = 'queued', last_sequence = 1, started_at = NULL, "
            "containment = NULL, stdout_offset = 0, stderr_offset = 0 WHERE id = ?",
            (execution_id,),
        )
    conn.close()


@pytest.mark.sqlite_only
def test_a_cell_handed_over_before_its_running_status_committed_runs_once(
    daemon_process: Factory, tmp_path: Any
) -> None:
    """Its interpreter ran it (or runs it): after the restart it is taken back as running, with
    its real outcome and all its output, never handed over a second time."""
    d: DaemonProcess = daemon_process()
    d.start()
    cx = new_context(d)
    assert d.wait(start_in(d, cx, "state = {'n': 1}"))["status"] == "completed"
    gate = tmp_path / "gate"
    running = start_in(d, cx, gated(gate))
    until(lambda: "before" in d.output(running))
    d.kill9()
    _as_if_never_running(d, running)
    gate.write_text("go")
    d.start()
    record = d.wait(running)
    assert record["status"] == "completed" and record["result"] == {"text/plain": "2"}, record
    assert d.output(running) == "before\nafter\n"
    again = d.wait(start_in(d, cx, "state"))
    assert again["result"] == {"text/plain": "{'n': 2}"}, again


def test_a_cell_taken_back_after_a_restart_still_holds_its_principals_slot(
    daemon_process: Factory, tmp_path: Any
) -> None:
    """The principal's `maxConcurrent` counts a cell the restart took back (running in its
    interpreter) as before it: the principal's next execution still waits for it."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        '[[tokens]]\ntoken = "ci-token-0123456789abcdef"\nprincipal = "ci"\n'
        'scopes = ["tools:execute", "logs:read"]\nmaxConcurrent = 1\n'
    )
    tokens.chmod(0o600)
    d: DaemonProcess = daemon_process(WORKBENCH_TOKENS_FILE=str(tokens))
    d.start()
    ci = httpx.Client(
        base_url=d.url, headers={"Authorization": "Bearer ci-token-0123456789abcdef"}, timeout=60
    )
    try:
        made = ci.post("/v1/contexts", json={"language": "python"})
        assert made.status_code == 201, made.text
        body = {"language": "python", "code": "print('spin', flush=True)\nwhile True: pass"}
        cell = ci.post(CODE, json={**body, "contextId": made.json()["contextId"], "background": True})
        running = cell.json()["executionId"]
        until(lambda: "spin" in d.output(running))
        waiting = ci.post("/v1/executions/workbench_bash", json={"command": "echo ran", "background": True})
        waiting_id = waiting.json()["executionId"]
        d.kill9()
        d.start()
        assert d.get(running)["status"] == "running"
        time.sleep(1)
        assert d.get(waiting_id)["status"] == "queued", "the cell taken back still holds ci's one slot"
        assert ci.post(f"/v1/executions/{running}/cancel", json={}).status_code == 202
        assert d.wait(waiting_id)["status"] == "completed"
    finally:
        ci.close()


def test_a_contexts_counts_are_kept_across_a_stop_right_after_a_cell(daemon_process: Factory) -> None:
    """Its counts reach its `context.json` a moment after a cell, off the answer's way; a daemon
    stopped within that moment still keeps them, and so does one killed after it."""
    d: DaemonProcess = daemon_process(WORKBENCH_SHUTDOWN_MODE="keep")  # its contexts live on
    d.start()
    cx = new_context(d)
    assert d.wait(start_in(d, cx, "n = 1"))["status"] == "completed"
    used = d.client.get(f"/v1/contexts/{cx}").json()
    assert used["executions"] == 1
    assert d.stop() == 0
    d.env["WORKBENCH_SHUTDOWN_MODE"] = "kill"  # from now on: the test's end stops everything
    d.start()
    again = d.client.get(f"/v1/contexts/{cx}").json()
    assert (again["executions"], again["lastUsedAt"]) == (1, used["lastUsedAt"]), again
    assert d.wait(start_in(d, cx, "n + 1"))["result"] == {"text/plain": "2"}
    time.sleep(1.5)  # past the moment (`contexts.SAVE_AFTER_S`)
    d.kill9()
    d.start()
    assert d.client.get(f"/v1/contexts/{cx}").json()["executions"] == 2
