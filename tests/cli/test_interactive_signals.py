"""`run -i`/`run -t` leave nothing running behind them, as plain `run` does (SIGTERM, SIGHUP; Ctrl-C
without a raw terminal is in test_signals), on a terminal whose size reads 0x0 too; and an input
that the daemon refuses ends the CLI with a line saying so instead of leaving every key unread."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios

from tests.cli.conftest import Cli
from tests.cli.test_signals import ENDED_S, ended, newest, read_to_exit, started
from tests.conftest import DaemonHandle

#: The ioctl that names a pty's other side (`/dev/pts/N`), from <asm-generic/ioctls.h>.
TIOCGPTN = 0x80045430


async def test_sigterm_cancels_run_i_and_exits_143(cli: Cli, wb: DaemonHandle) -> None:
    process = await cli.open(
        "run", "-i", "--", "trap 'echo got TERM; exit 3' TERM; echo started; sleep 60 & wait"
    )
    seen = await started(process, b"started\n")
    process.send_signal(signal.SIGTERM)
    out, err = await read_to_exit(process)
    assert process.returncode == 128 + signal.SIGTERM, (out, err)
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "workbench run got SIGTERM"
    assert seen + out == b"started\ngot TERM\n" and b"workbench: cancelled: " in err


async def test_sighup_and_sigterm_cancel_run_it_on_a_terminal(cli: Cli, wb: DaemonHandle) -> None:
    for how, status in (("hang up", 128 + signal.SIGHUP), ("SIGTERM", 128 + signal.SIGTERM)):
        terminal = await cli.terminal("run", "-it", "--", "echo started; sleep 60")
        try:
            await terminal.expect(b"started")
            if how == "hang up":
                terminal.hang_up()
            else:
                terminal.process.send_signal(signal.SIGTERM)
            assert await terminal.finish(ENDED_S) == status, bytes(terminal.screen)
        finally:
            terminal.close()
        record = await ended(wb, (await newest(wb))["executionId"])
        assert record["status"] == "cancelled", (how, record)


async def test_a_terminal_of_no_size_still_takes_keys(cli: Cli, wb: DaemonHandle) -> None:
    """A 0x0 window (a bare pty): the size is left at the default, and keys go to the program."""
    terminal = await cli.terminal("run", "-it", "--", "stty size; read -r x; echo got-$x", rows=0, cols=0)
    try:
        await terminal.expect(b"24 80")
        terminal.type(b"yes\r")
        await terminal.expect(b"got-yes")
        assert await terminal.finish() == 0, bytes(terminal.screen)
    finally:
        terminal.close()


async def test_a_refused_input_ends_run_i_with_a_line_and_cancels(cli: Cli, wb: DaemonHandle) -> None:
    terminal = await cli.terminal("run", "-i", "--", "echo started; sleep 60")
    try:
        await terminal.expect(b"started")
        execution_id = (await newest(wb))["executionId"]
        closed = await wb.client.post(f"/v1/executions/{execution_id}/input", json={"data": "", "eof": True})
        assert closed.status_code == 204, closed.text
        terminal.type(b"more\r")
        await terminal.expect(b"workbench: conflict: cannot send input to ex_")
        assert await terminal.finish(ENDED_S) == 125, bytes(terminal.screen)
    finally:
        terminal.close()
    record = await ended(wb, execution_id)
    assert record["status"] == "cancelled", record


def _local_modes(number: int) -> int:
    """The local modes (`c_lflag`) of the terminal `/dev/pts/<number>` now."""
    side = os.open(f"/dev/pts/{number}", os.O_RDWR | os.O_NOCTTY)
    try:
        modes: int = termios.tcgetattr(side)[3]
        return modes
    finally:
        os.close(side)


async def test_sigterm_ends_attach_and_gives_the_terminal_back(cli: Cli, wb: DaemonHandle) -> None:
    """`attach` on a raw terminal, ended by SIGTERM or a hang-up: the terminal is as it found it
    (not raw), the exit status says the signal, and the execution runs on."""
    started_ = await wb.start("echo started; sleep 60", background=True, tty=True)
    execution_id = started_["executionId"]
    terminal = await cli.terminal("attach", execution_id)
    try:
        assert terminal.main is not None
        number = struct.unpack("I", fcntl.ioctl(terminal.main, TIOCGPTN, b"\0\0\0\0"))[0]
        await terminal.expect(b"started")
        assert not _local_modes(number) & termios.ICANON, "attach puts its terminal in raw mode"
        terminal.process.send_signal(signal.SIGTERM)
        assert await terminal.finish(ENDED_S) == 128 + signal.SIGTERM, bytes(terminal.screen)
        modes = _local_modes(number)
        assert modes & termios.ICANON and modes & termios.ECHO, "the terminal was left raw"
    finally:
        terminal.close()
    assert (await wb.client.get(f"/v1/executions/{execution_id}")).json()["status"] == "running"
    await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    await ended(wb, execution_id)


async def test_run_i_feeds_more_than_the_pending_input_limit_to_a_slow_reader(cli: Cli) -> None:
    """A piped stdin larger than what the supervisor keeps unread (1 MiB) waits for the program to
    read it (`429 input_backlog` is sent again later), rather than ending the command."""
    data = bytes(range(256)) * (12 * 1024)  # 3 MiB
    ran = await cli("run", "-i", "--", "sleep 1; wc -c", stdin=data)
    assert ran.code == 0, ran
    assert ran.out.strip() == str(len(data)).encode(), ran
