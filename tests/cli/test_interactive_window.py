"""A signal in the few instructions between `run -i`'s start and its follow (the terminal made
raw, the input thread started) is held back and acted on once the follow begins: the execution is
cancelled as for any SIGTERM, and the command exits 143, instead of ending with a traceback, the
execution left running and the terminal raw.

The CLI runs in a process of its own, as `python -m workbench` would, with the signal raised
where its input thread is made (a real one lands there by luck alone)."""

from __future__ import annotations

import signal
import subprocess
import sys

import trio

from tests import ceilings
from tests.cli.conftest import Cli
from tests.cli.test_signals import ENDED_S, ended, newest
from tests.conftest import DaemonHandle


def _feeder_that(does: str) -> str:
    """`workbench run -i` (the program's arguments), whose input thread's maker first `does`."""
    return f"""
import signal, sys
from workbench.cli import attach
from workbench.cli.main import main

class Feeder(attach._Feeder):
    def __init__(self, *args):
        {does}
        super().__init__(*args)

attach._Feeder = Feeder
main(sys.argv[1:])
"""


async def _run_i(cli: Cli, feeder_does: str, command: str) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-c", _feeder_that(feeder_does), "run", "-i", "--", command]
    with ceilings.within(ENDED_S, "`workbench run -i` to exit"):
        return await trio.run_process(
            argv, stdin=b"", capture_stdout=True, capture_stderr=True, check=False, env=cli.env()
        )


async def test_a_sigterm_while_run_i_sets_up_cancels_it(cli: Cli, wb: DaemonHandle) -> None:
    ran = await _run_i(cli, "signal.raise_signal(signal.SIGTERM)", "trap 'exit 3' TERM; sleep 60 & wait")
    err = ran.stderr.decode()
    assert ran.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err, err
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "workbench run got SIGTERM"


async def test_run_i_without_a_terminal_keeps_stderr_apart(cli: Cli) -> None:
    """Without `-t` the program's stdout and stderr are two streams, and stay two: `2>/dev/null`
    hides its errors alone, as with plain `run` and `docker run -i`."""
    ran = await cli("run", "-i", "--", "cat; echo err >&2", stdin=b"typed\n")
    assert ran.code == 0, ran.err
    assert ran.out == b"typed\n"
    assert b"err\n" in ran.err


async def test_run_i_that_cannot_set_up_cancels_what_it_started(cli: Cli, wb: DaemonHandle) -> None:
    """Started, but its set-up failed: it leaves nothing running behind it (as any `run`)."""
    # As when no thread can start.
    ran = await _run_i(cli, 'raise RuntimeError("can\'t start new thread")', "sleep 60")
    assert ran.returncode != 0
    record = await ended(wb, (await newest(wb))["executionId"])
    assert record["status"] == "cancelled", record
    assert "could not join it" in (record["cancelReason"] or ""), record
