"""The client's interactive methods against a real daemon: open_stdin, tty, send_input, resize, signal."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import trio

from tests import procs
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, Conflict, Execution, ExecutionStatus


def _running(wb: Client, run: Execution) -> Execution:
    deadline = time.monotonic() + 30
    while run.status is ExecutionStatus.QUEUED:
        assert time.monotonic() < deadline
        time.sleep(0.01)
        run = wb.get(run)
    return run


def blocking(url: str) -> None:
    """`Client`: text and bytes input, eof, a terminal's resize, a foreground signal."""
    with Client(url, TOKEN) as wb:
        run = _running(wb, wb.run_bash("read -r a; read -r b; echo $a$b", background=True, open_stdin=True))
        assert run.capabilities.interactive == "stdin"
        wb.send_input(run, "x\n")
        wb.send_input(run, b"y\n", eof=True)
        done = wb.wait(run)
        assert done.preview is not None and done.preview.stdout == "xy\n"
        with pytest.raises(Conflict):
            wb.send_input(done, "late")
        script = "trap 'stty size; exit 0' WINCH; sleep 300 & wait"
        tty = _running(wb, wb.run_bash(script, background=True, tty=(10, 20)))
        assert tty.tty and tty.tty_size is not None and tty.tty_size.rows == 10
        assert tty.capabilities.interactive == "tty"
        time.sleep(0.2)  # the trap is set
        wb.resize(tty, 11, 22)
        resized = wb.wait(tty)
        assert resized.preview is not None and resized.preview.stdout == "11 22\r\n"
        with pytest.raises(ValueError, match="KILL"):
            wb.signal(tty, "KILL")


async def test_blocking_client(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(blocking, wb.url)


async def test_async_client_signal_and_input(wb: DaemonHandle, tmp_path: Path) -> None:
    """`AsyncClient`: a trapped INT from `signal`, then input; persist_shell between two runs."""
    async with AsyncClient(wb.url, TOKEN) as client:
        script = "trap 'echo got-int' INT; touch ready; read -r line; echo $line"
        run = await client.run_bash(script, background=True, open_stdin=True, cwd=str(tmp_path))
        await procs.eventually(lambda: (tmp_path / "ready").exists())
        signalled = await client.signal(run, "SIGINT")
        assert signalled.execution_id == run.execution_id
        await client.send_input(run, "bye\n")
        done = await client.wait(run)
        assert done.preview is not None and done.preview.stdout == "got-int\nbye\n"
        await client.run_bash("cd /tmp && export P=7", persist_shell=True, session_id="p")
        after = await client.run_bash("echo $PWD $P", persist_shell=True, session_id="p")
        assert after.preview is not None and after.preview.stdout == "/tmp 7\n"
