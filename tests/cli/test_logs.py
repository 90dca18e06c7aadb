"""`workbench logs` as lines: `--tail` (byte for byte, from the end of an artifact too), `--since`,
`-t`, and following from the tail."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import trio

from tests import ceilings
from tests.cli.conftest import Cli
from tests.cli.test_run import BIG, BIG_ERR, BIG_OUT
from tests.conftest import DaemonHandle

STAMP = rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "


async def test_tail_keeps_the_last_lines_of_each_stream(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("for i in 1 2 3 4; do echo out $i; echo err $i >&2; done; printf 'no newline'")
    execution_id = record["executionId"]
    two = await cli.ok("logs", "--tail", "2", execution_id)
    assert (two.out, two.err) == (b"out 4\nno newline", b"err 3\nerr 4\n")
    assert (await cli.ok("logs", "--tail", "0", execution_id)).out == b""
    many = await cli.ok("logs", "--tail", "100", "--stderr", execution_id)
    assert (many.out, many.err) == (b"", b"err 1\nerr 2\nerr 3\nerr 4\n")


async def test_tail_of_a_big_output_reads_the_end_of_its_artifact(
    cli: Cli, wb: DaemonHandle, tmp_path: Path
) -> None:
    """Promise 1: past the budget and not UTF-8, the tail is still every byte of those lines."""
    script = tmp_path / "big.py"
    script.write_text(BIG)
    record = await wb.run(f"{sys.executable} {script}")
    assert {a["name"] for a in record["artifacts"]} == {"stdout", "stderr"}
    ran = await cli.ok("logs", "--tail", "3000", record["executionId"])
    assert ran.out == b"".join(BIG_OUT.splitlines(keepends=True)[-3000:])
    assert ran.err == BIG_ERR


async def test_timestamps_and_since(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    # "second" is written only once "first" is journaled, and 3.5 s later: on a busy machine a
    # `sleep` between the two lines did not keep their events apart (the first one's commit came
    # late, and `--since 1s` found it).
    started = await wb.start(
        f"echo first; while [ ! -e {tmp_path / 'go'} ]; do sleep 0.02; done; echo second; echo late >&2"
    )
    execution_id = started["executionId"]
    with ceilings.within(30, "the first line's event"):
        while not any(e["outputDelta"] == "first\n" for e in await wb.events(execution_id)):  # noqa: ASYNC110
            await trio.sleep(0.02)
    await trio.sleep(3.5)
    (tmp_path / "go").touch()
    assert (await wb.wait(execution_id))["status"] == "completed"
    recent = await cli.ok("logs", "--since", "3s", execution_id)
    assert (recent.out, recent.err) == (b"second\n", b"late\n")
    stamped = await cli.ok("logs", "-t", execution_id)
    assert re.fullmatch(rb"%sfirst\n%ssecond\n" % (STAMP, STAMP), stamped.out), stamped
    assert re.fullmatch(rb"%slate\n" % STAMP, stamped.err)
    at = stamped.out.split(b" ", 1)[0].decode()
    since_first = await cli.ok("logs", "--since", at, "--stdout", execution_id)
    assert since_first.out == b"first\nsecond\n"
    assert (await cli.ok("logs", "--since", "2999-01-01", execution_id)).out == b""


async def test_follow_from_the_tail(cli: Cli, wb: DaemonHandle) -> None:
    running = await wb.start(
        "for i in $(seq 1 5); do echo line $i; done; sleep 1; echo more; sleep 0.5; echo last"
    )
    execution_id = running["executionId"]
    with ceilings.within(30, "the first lines to be journaled"):
        # What is awaited is another process's output reaching the journal: nothing announces it.
        while not any("line 5" in (e["outputDelta"] or "") for e in await wb.events(execution_id)):  # noqa: ASYNC110
            await trio.sleep(0.05)
    with ceilings.within(60, "`logs -f --tail` to end with the execution"):
        ran = await cli.ok("logs", "-f", "--tail", "2", running["executionId"])
    assert ran.out == b"line 4\nline 5\nmore\nlast\n"
    stamped = await cli.ok("logs", "-f", "-t", "--tail", "1", running["executionId"])
    assert re.fullmatch(rb"%slast\n" % STAMP, stamped.out), stamped
