"""Interactive executions end to end: open stdin, terminals, input, resize, foreground signals."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import trio

from tests import procs
from tests.conftest import DaemonHandle

PYTHON = os.path.realpath(sys.executable)  # a real interpreter, never a PATH shim


async def _output(wb: DaemonHandle, execution_id: str) -> str:
    events = await wb.events(execution_id)
    return "".join(e["outputDelta"] for e in events if e["eventType"] == "output")


async def _until_output(wb: DaemonHandle, execution_id: str, text: str) -> str:
    """Wait until the journal's output of `execution_id` holds `text` (what a reader sees)."""
    out = ""
    with trio.move_on_after(30):
        while text not in (out := await _output(wb, execution_id)):  # noqa: ASYNC110 - a test's look
            await trio.sleep(0.02)
    assert text in out, (await wb.client.get(f"/v1/executions/{execution_id}")).json()
    return out


async def _start(wb: DaemonHandle, command: str, **body: Any) -> dict[str, Any]:
    """Start in the background and return the record once it runs (input before is a 409)."""
    started = await wb.start(command, **body)
    with trio.fail_after(30):
        while started["status"] == "queued":
            await trio.sleep(0.01)
            started = (await wb.client.get(f"/v1/executions/{started['executionId']}")).json()
    assert started["status"] == "running", started
    return started


async def _input(wb: DaemonHandle, execution_id: str, **body: Any) -> None:
    response = await wb.client.post(f"/v1/executions/{execution_id}/input", json=body)
    assert response.status_code == 204, response.text


async def test_a_python_repl_keeps_its_state_between_inputs(wb: DaemonHandle) -> None:
    """Input reaches a running REPL through open stdin; each input is journaled; eof ends it."""
    python = PYTHON
    started = await _start(wb, f"{python} -u -i -q", openStdin=True)
    execution_id = started["executionId"]
    assert started["openStdin"] is True and started["tty"] is False
    await _input(wb, execution_id, data="x = 20\n")
    await _input(wb, execution_id, data="print(x + 22)\n")
    await _until_output(wb, execution_id, "42")
    record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
    assert record["capabilities"]["interactive"] == "stdin"
    await _input(wb, execution_id, data="", eof=True)
    ended = await wb.wait(execution_id)
    assert (ended["status"], ended["exitCode"]) == ("completed", 0)
    assert ended["capabilities"]["interactive"] is False
    inputs = [e for e in await wb.events(execution_id) if e["eventType"] == "input"]
    assert [(e["inputDelta"], e["inputBytes"]) for e in inputs] == [
        ("x = 20\n", 7),
        ("print(x + 22)\n", 14),
        ("", 0),
    ]
    assert inputs[-1]["message"] == "end of file"
    late = await wb.client.post(f"/v1/executions/{execution_id}/input", json={"data": "1\n"})
    assert late.status_code == 409 and late.json()["error"]["code"] == "conflict"


async def test_read_prompts_answered_with_raw_bytes_and_unrecorded_input(wb: DaemonHandle) -> None:
    """Raw bytes as octet-stream; `record: false` keeps the bytes out of the journal."""
    started = await _start(wb, 'read -r name; read -r secret; echo "hi $name ${#secret}"', openStdin=True)
    execution_id = started["executionId"]
    path = f"/v1/executions/{execution_id}/input"
    # An input of nothing (no bytes, no end of file) writes nothing and journals nothing.
    for empty in ({}, {"data": ""}):
        assert (await wb.client.post(path, json=empty)).status_code == 204
    octets = {"Content-Type": "application/octet-stream"}
    assert (await wb.client.post(path, content=b"", headers=octets)).status_code == 204
    raw = await wb.client.post(path, content=b"ann\n", headers=octets)
    assert raw.status_code == 204, raw.text
    await _input(wb, execution_id, data="hunter2\n", record=False)
    ended = await wb.wait(execution_id)
    assert ended["preview"]["stdout"] == "hi ann 7\n"
    inputs = [e for e in await wb.events(execution_id) if e["eventType"] == "input"]
    assert [(e["inputDelta"], e["inputBytes"]) for e in inputs] == [("ann\n", 4), (None, 8)]


async def test_input_is_refused_without_open_stdin_and_when_bad(wb: DaemonHandle) -> None:
    """Promise 7: refused input changes nothing (no event)."""
    running = await _start(wb, "sleep 30")
    execution_id = running["executionId"]
    path = f"/v1/executions/{execution_id}/input"
    refused = await wb.client.post(path, json={"data": "x"})
    assert refused.status_code == 409 and "openStdin" in refused.json()["error"]["message"]
    for body in ({"data": 1}, {"eof": "yes"}, {"data": "x", "other": 1}):
        response = await wb.client.post(path, json=body)
        assert response.status_code == 422, (body, response.text)
    bad_flag = await wb.client.post(
        path + "?eof=maybe", content=b"x", headers={"Content-Type": "application/octet-stream"}
    )
    assert bad_flag.status_code == 400
    resized = await wb.client.post(f"/v1/executions/{execution_id}/resize", json={"rows": 10, "cols": 10})
    assert resized.status_code == 409
    assert [e["eventType"] for e in await wb.events(execution_id)].count("input") == 0
    both = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "cat", "stdin": "x", "openStdin": True}
    )
    assert both.status_code == 422
    size_alone = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "cat", "ttySize": {"rows": 5, "cols": 5}}
    )
    assert size_alone.status_code == 422
    await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})


async def test_input_that_nothing_reads_any_more_is_refused_as_unread(wb: DaemonHandle) -> None:
    """Its tree closed its stdin: the input that finds it so is a 409 with `details.stdin`
    `unread`, not a `204` for bytes dropped (nor an `input` event); the execution runs on."""
    started = await _start(wb, 'read -r a; exec 0<&-; echo "got $a"; sleep 30', openStdin=True)
    execution_id = started["executionId"]
    try:
        await _input(wb, execution_id, data="one\n")
        await _until_output(wb, execution_id, "got one")
        for data in ("two\n", "three\n", ""):  # every one after the first too, an end of file too
            body = {"data": data} if data else {"eof": True}
            refused = await wb.client.post(f"/v1/executions/{execution_id}/input", json=body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"]["details"] == {"stdin": "unread"}, refused.text
        record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
        assert record["status"] == "running" and record["capabilities"]["interactive"] is False, record
        inputs = [e["inputDelta"] for e in await wb.events(execution_id) if e["eventType"] == "input"]
        assert inputs == ["one\n"], inputs
    finally:
        await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
        await wb.wait(execution_id)


async def test_the_first_input_nothing_reads_says_unread(wb: DaemonHandle) -> None:
    started = await _start(wb, "exec 0<&-; echo closed; sleep 30", openStdin=True)
    execution_id = started["executionId"]
    try:
        await _until_output(wb, execution_id, "closed")
        refused = await wb.client.post(f"/v1/executions/{execution_id}/input", json={"data": "two\n"})
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["details"] == {"stdin": "unread"}, refused.text
    finally:
        await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
        await wb.wait(execution_id)


async def test_input_to_a_process_that_never_reads_does_not_block_the_daemon(wb: DaemonHandle) -> None:
    """A bounded buffer, then 429 with a clear message; the daemon answers other requests meanwhile."""
    running = await _start(wb, "sleep 300", openStdin=True)
    execution_id = running["executionId"]
    chunk = "x" * (512 * 1024)
    statuses = []
    with trio.fail_after(20):
        for _ in range(8):
            response = await wb.client.post(f"/v1/executions/{execution_id}/input", json={"data": chunk})
            statuses.append(response.status_code)
            if response.status_code == 429:
                break
    assert statuses[-1] == 429, statuses
    assert response.json()["error"]["code"] == "input_backlog"
    assert "has not read" in response.json()["error"]["message"]
    assert (await wb.client.get("/healthz")).status_code == 200
    cancelled = await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    assert cancelled.status_code == 202


async def test_a_tty_execution_is_a_terminal_with_size_resize_and_term(wb: DaemonHandle) -> None:
    """tty: [ -t 1 ] holds, stty size says ttySize, a resize reaches the program (SIGWINCH)."""
    script = (
        "[ -t 1 ] && echo is-a-tty; stty size; echo $TERM; echo err >&2; "
        "trap 'stty size; kill $s' WINCH; sleep 300 & s=$!; echo ready; wait $s; echo done"
    )
    started = await _start(wb, script, tty=True, ttySize={"rows": 33, "cols": 101})
    execution_id = started["executionId"]
    assert started["tty"] is True and started["ttySize"] == {"rows": 33, "cols": 101}
    await _until_output(wb, execution_id, "ready")
    record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
    assert record["capabilities"]["interactive"] == "tty"
    for bad in ({"rows": 50.0, "cols": 132}, {"rows": "50", "cols": 132}, {"rows": True, "cols": 132}):
        refused = await wb.client.post(f"/v1/executions/{execution_id}/resize", json=bad)
        assert refused.status_code == 422, (bad, refused.text)
    resized = await wb.client.post(f"/v1/executions/{execution_id}/resize", json={"rows": 50, "cols": 132})
    assert resized.status_code == 204, resized.text
    ended = await wb.wait(execution_id)
    assert ended["status"] == "completed", ended
    out = await _output(wb, execution_id)
    assert out == "is-a-tty\r\n33 101\r\nxterm-256color\r\nerr\r\nready\r\n50 132\r\ndone\r\n"
    assert ended["preview"]["stderr"] == "" and ended["ttySize"] == {"rows": 50, "cols": 132}
    events = await wb.events(execution_id)
    assert [e["ttySize"] for e in events if e["eventType"] == "resize"] == [{"rows": 50, "cols": 132}]


async def test_ctrl_c_interrupts_the_foreground_job_not_the_shell(wb: DaemonHandle) -> None:
    """signal INT on a tty goes to the foreground process group: the job dies, bash lives on."""
    started = await _start(wb, "PS1='$ ' exec bash --norc --noprofile -i", tty=True)
    execution_id = started["executionId"]
    await _input(wb, execution_id, data="sleep 300; echo status-$?\n")
    await _until_output(wb, execution_id, "sleep 300")
    await procs.eventually(lambda: procs.in_foreground(["sleep", "300"]))
    sent = await wb.client.post(f"/v1/executions/{execution_id}/signal", json={"signal": "INT"})
    assert sent.status_code == 202
    await _input(wb, execution_id, data="echo alive\n")
    # The echo of the typed line, then what it printed (after the terminal's own escapes).
    out = await _until_output(wb, execution_id, "\ralive\r\n")
    assert "status-" not in out.replace("status-$?", ""), "Ctrl-C abandons the rest of the line"
    await _input(wb, execution_id, data="exit 4\n")
    ended = await wb.wait(execution_id)
    assert (ended["status"], ended["exitCode"]) == ("failed", 4)


async def test_cancel_and_deadline_kill_tty_trees_whole(wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 3 on a terminal: setsid escapees holding the terminal die with the tree."""

    # The escapee as the host finds it (`SHELL_ME`): $! is the pid namespace's where the tree has one.
    escapee = f"setsid bash -c '{procs.SHELL_ME}; echo $me > pid; exec sleep 300' &"
    script = f"{escapee} (sleep 300 &); until [ -s pid ]; do sleep 0.01; done; echo up; sleep 300"
    started = await wb.start(script, tty=True, cwd=str(tmp_path))
    await _until_output(wb, started["executionId"], "up")
    first = procs.host_pid((tmp_path / "pid").read_text())
    cancelled = await wb.client.post(f"/v1/executions/{started['executionId']}/cancel", json={})
    assert cancelled.status_code == 202
    assert (await wb.wait(started["executionId"]))["status"] == "cancelled"
    (tmp_path / "pid").unlink()
    timed = await wb.start(script, tty=True, cwd=str(tmp_path), timeoutMs=3000)
    await _until_output(wb, timed["executionId"], "up")
    second = procs.host_pid((tmp_path / "pid").read_text())
    assert (await wb.wait(timed["executionId"]))["status"] == "timed_out"
    await procs.eventually(lambda: not procs.alive(first), within_s=5)
    await procs.eventually(lambda: not procs.alive(second), within_s=5)
