"""`workbench mcp` when the client cancels a tool call (MCP `notifications/cancelled`, which the
official client sends when its caller gives up and when its read timeout passes): the run the call
started is cancelled too, its whole tree, and the server serves on."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.cli.test_mcp import HANDSHAKE, PYTHON, bash_call, call, data, lines, raw_server, session
from tests.conftest import DaemonHandle
from workbench.wire.status import ExecutionStatus

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")

from mcp.shared.exceptions import MCPError


async def _the_run_of(wb: DaemonHandle, session_id: str) -> dict[str, Any]:
    """The one execution of `session_id`, once it has ended."""
    with ceilings.within(30, f"the run of session {session_id} to end"):
        while True:
            listed = (await wb.client.get("/v1/executions", params={"sessionId": session_id})).json()
            runs = listed["executions"]
            if runs and ExecutionStatus(runs[0]["status"]).terminal:
                assert len(runs) == 1, runs
                record: dict[str, Any] = runs[0]
                return record
            await trio.sleep(0.1)


@pytest.mark.timeout(180)
async def test_a_cancelled_tool_call_cancels_its_run(wb: DaemonHandle, tmp_path: Path) -> None:
    async with session(wb.url, tmp_path) as client:
        # The client's read timeout: it gives up and says so (notifications/cancelled).
        with pytest.raises(MCPError):
            await client.call_tool("bash", {"command": "sleep 60", "sessionId": "t1"}, read_timeout_seconds=1)
        timed_out = await _the_run_of(wb, "t1")
        assert timed_out["status"] == "cancelled" and "cancelled" in timed_out["cancelReason"], timed_out
        # The caller cancels the call (as an agent's user stopping it would).
        program = "import time; time.sleep(60)"
        with trio.move_on_after(1) as waited:
            await client.call_tool("code", {"language": "python", "code": program, "sessionId": "t2"})
        assert waited.cancelled_caught
        assert (await _the_run_of(wb, "t2"))["status"] == "cancelled"
        # A stateful cell: the cell is cancelled (the context itself lives on).
        with trio.move_on_after(2):
            await client.call_tool(
                "code", {"language": "python", "code": program, "stateful": True, "sessionId": "t3"}
            )
        assert (await _the_run_of(wb, "t3"))["status"] == "cancelled"
        ok = await call(client, "bash", command=f"{PYTHON} -c 'print(1)'")
        assert data(ok)["stdout"] == "1\n"
    for context in (await wb.client.get("/v1/contexts")).json()["contexts"]:
        assert (await wb.client.delete(f"/v1/contexts/{context['contextId']}")).status_code == 204


@pytest.mark.timeout(120)
async def test_a_client_that_goes_away_mid_call_leaves_its_run_going(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Promise 5 (connections are not runs): the client's end of stdin closing while a call runs,
    with no `notifications/cancelled`, ends the server, not the run it started."""
    server = await raw_server(wb.url, tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    try:
        await server.stdin.send_all(lines([*HANDSHAKE, bash_call(2, "sleep 60", "gone")]))
        with ceilings.within(30, "the tool call's run to start"):
            while True:
                listed = (await wb.client.get("/v1/executions", params={"sessionId": "gone"})).json()
                if listed["executions"]:
                    break
                await trio.sleep(0.05)
        await server.stdin.aclose()  # the client is gone
        with ceilings.within(30, "the server to end once its client is gone"):
            await server.wait()
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    await trio.sleep(1)  # a cancel, had one been sent, would have been recorded by now
    run = (await wb.client.get("/v1/executions", params={"sessionId": "gone"})).json()["executions"][0]
    assert run["status"] == "running", run
    await wb.client.post(f"/v1/executions/{run['executionId']}/cancel", json={})
    await wb.wait(run["executionId"])


@pytest.mark.timeout(120)
async def test_a_client_that_closes_both_pipes_mid_call_ends_the_server_cleanly(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Its stdout gone too (a client killed), the server's answer has nowhere to go: the server
    ends with status 0 and no traceback (it ended 1 with a BrokenPipeError's)."""
    server = await raw_server(wb.url, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    try:
        await server.stdin.send_all(lines([*HANDSHAKE, bash_call(2, "sleep 1", "closed")]))
        with ceilings.within(30, "the answer to initialize"):
            assert b'"id":1' in (await server.stdout.receive_some(65536)).replace(b" ", b"")
        await server.stdout.aclose()  # the client is gone: its answer will have nowhere to go
        await trio.sleep(2)  # the run ends, and its answer is written
        await server.stdin.aclose()
        with ceilings.within(30, "the server to end once its client is gone"):
            await server.wait()
        errors = await server.stderr.receive_some(1 << 20)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert server.returncode == 0 and b"Traceback" not in errors, errors.decode(errors="replace")
