"""What Ctrl-C, SIGTERM, SIGHUP and a closed stdout do to `workbench run`: nothing is left running.

Each of the three ways a CLI is cut off (a tool's timeout sends SIGTERM, a closed terminal SIGHUP,
`| head` closes stdout) cancels the execution; without that, it ran on (`yes | head -1` wrote
gigabytes). Ctrl-C is on a real pseudo-terminal: the first reaches the program as SIGINT, the
second cancels, the third stops waiting.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle

#: How long a cancelled execution may take to be recorded as ended (its grace is 5 s).
ENDED_S = 30


async def newest(wb: DaemonHandle) -> dict[str, Any]:
    records = (await wb.client.get("/v1/executions", params={"limit": 1})).json()["executions"]
    assert records, "no execution was started"
    record: dict[str, Any] = records[0]
    return record


async def ended(wb: DaemonHandle, execution_id: str) -> dict[str, Any]:
    """The record once terminal; fails if it is still running after ENDED_S (left behind)."""
    record = await wb.wait(execution_id, wait_ms=ENDED_S * 1000)
    assert record["status"] in ("cancelled", "completed", "failed", "timed_out"), (
        f"the execution was left running: {record['status']}"
    )
    return record


async def started(process: trio.Process, marker: bytes) -> bytes:
    assert process.stdout is not None
    seen = b""
    with ceilings.within(30, f"the execution to print {marker!r}"):
        while marker not in seen:
            chunk = await process.stdout.receive_some()
            assert chunk, f"stdout ended before {marker!r}: {seen!r}"
            seen += chunk
    return seen


async def test_sigterm_cancels_the_execution_and_exits_143(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 3 at the CLI: an agent's tool timeout (SIGTERM) leaves nothing running."""
    process = await cli.open("run", "--", "echo started; sleep 60")
    await started(process, b"started\n")
    process.send_signal(signal.SIGTERM)
    with ceilings.within(ENDED_S, "`workbench run` to exit after SIGTERM"):
        await process.wait()
    assert process.returncode == 128 + signal.SIGTERM
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "workbench run got SIGTERM"


async def test_sigterm_writes_what_the_program_prints_until_its_end(cli: Cli, wb: DaemonHandle) -> None:
    """What a `trap ... TERM` prints while the cancel ends it reaches our stdout, then the line
    that says it was cancelled."""
    script = "trap 'echo got TERM; exit 3' TERM; echo started; sleep 60 & wait"
    process = await cli.open("run", "--", script)
    seen = await started(process, b"started\n")
    process.send_signal(signal.SIGTERM)
    out, err = await read_to_exit(process)
    assert process.returncode == 128 + signal.SIGTERM, (out, err)
    execution_id = (await newest(wb))["executionId"]
    assert seen + out == b"started\ngot TERM\n", err
    assert err.decode().splitlines() == [
        f"workbench: SIGTERM: cancelling {execution_id}",
        f"workbench: cancelled: {execution_id} (workbench run got SIGTERM)",
    ]


async def read_to_exit(process: trio.Process) -> tuple[bytes, bytes]:
    """Everything on its stdout and stderr until it exits."""
    out, err = bytearray(), bytearray()

    async def drain(stream: Any, into: bytearray) -> None:
        while chunk := await stream.receive_some():
            into.extend(chunk)

    with ceilings.within(ENDED_S, "the CLI to exit"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, process.stdout, out)
            nursery.start_soon(drain, process.stderr, err)
        await process.wait()
    return bytes(out), bytes(err)


async def test_a_closed_terminal_cancels_the_execution(cli: Cli, wb: DaemonHandle) -> None:
    """SIGHUP, from the terminal itself going away (not a kill): the execution is cancelled."""
    terminal = await cli.terminal("run", "--", "echo started; sleep 60")
    try:
        await terminal.expect(b"started")
        terminal.hang_up()
        status = await terminal.finish(ENDED_S)
    finally:
        terminal.close()
    assert status == 128 + signal.SIGHUP
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "workbench run got SIGHUP"


async def test_sighup_by_kill_cancels_too(cli: Cli, wb: DaemonHandle) -> None:
    process = await cli.open("run", "--", "echo started; sleep 60")
    await started(process, b"started\n")
    process.send_signal(signal.SIGHUP)
    with ceilings.within(ENDED_S, "`workbench run` to exit after SIGHUP"):
        await process.wait()
    assert process.returncode == 128 + signal.SIGHUP
    assert (await ended(wb, (await newest(wb))["executionId"]))["status"] == "cancelled"


async def test_a_closed_stdout_cancels_the_execution_and_exits_141(cli: Cli, wb: DaemonHandle) -> None:
    """`workbench run -- yes | head -1`: the reader goes away, and so does `yes`."""
    process = await cli.open("run", "--", "yes")
    assert process.stdout is not None
    await started(process, b"y\n")
    await process.stdout.aclose()
    with ceilings.within(ENDED_S, "`workbench run` to exit once its stdout closed"):
        await process.wait()
    assert process.returncode == 141
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled"
    assert record["cancelReason"] == "its output's reader went away (stdout closed)"


async def test_background_is_left_alone(cli: Cli, wb: DaemonHandle) -> None:
    ran = await cli.ok("run", "--background", "--", "sleep 30")
    execution_id = ran.text.strip()
    assert (await wb.wait(execution_id, wait_ms=200))["status"] == "running"
    await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    await wb.wait(execution_id)


async def test_ctrl_c_reaches_the_program_first(cli: Cli, wb: DaemonHandle) -> None:
    """As on a terminal: a program that traps SIGINT ends its own way, with its own code."""
    terminal = await cli.terminal(
        "run", "--", "trap 'echo got INT; exit 7' INT; echo started; sleep 30 & wait"
    )
    try:
        await terminal.expect(b"started")
        terminal.type(b"\x03")
        await terminal.expect(b"got INT")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == 7, bytes(terminal.screen)
    assert b"sent SIGINT" in terminal.screen
    events = await wb.events((await newest(wb))["executionId"])
    assert [e["signal"] for e in events if e["eventType"] == "signal"] == ["SIGINT"]


@pytest.mark.parametrize("flags", [(), ("-i",)], ids=["run", "run -i"])
async def test_a_second_ctrl_c_cancels_and_a_third_stops_waiting(
    cli: Cli, wb: DaemonHandle, flags: tuple[str, ...]
) -> None:
    """The program ignores SIGINT: the second Ctrl-C cancels it (SIGTERM first: its trap runs).
    `run -i` too: without a raw terminal, Ctrl-C is ours, not a key sent on."""
    script = "trap '' INT; trap 'echo got TERM; exit 3' TERM; echo started; while :; do sleep 0.1; done"
    terminal = await cli.terminal("run", *flags, "--", script)
    try:
        await terminal.expect(b"started")
        terminal.type(b"\x03")
        await terminal.expect(b"sent SIGINT")
        terminal.type(b"\x03")
        await terminal.expect(b"got TERM")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == 130, bytes(terminal.screen)
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "interrupted (Ctrl-C)"
    # A program that ignores SIGTERM too: the third Ctrl-C stops waiting, and the CLI dies of SIGINT.
    stubborn = "trap '' INT TERM; echo started; while :; do sleep 0.1; done"
    terminal = await cli.terminal("run", "--", stubborn)
    try:
        await terminal.expect(b"started")
        terminal.type(b"\x03")
        await terminal.expect(b"sent SIGINT")
        terminal.type(b"\x03")
        await terminal.expect(b"cancelling")
        terminal.type(b"\x03")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == -signal.SIGINT
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["signal"] == "SIGKILL"


async def test_ctrl_c_on_wait_stops_waiting_only(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 5: the wait ends (by SIGINT, as programs do: a shell shows 130); the execution goes on."""
    running = await wb.start("sleep 30")
    terminal = await cli.terminal("wait", running["executionId"])
    try:
        await terminal.expect(rb"waiting \d", "the progress line of the wait")
        terminal.type(b"\x03")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == -signal.SIGINT
    assert (await wb.wait(running["executionId"], wait_ms=100))["status"] == "running"
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])
