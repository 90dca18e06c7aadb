"""`workbench send` and `workbench kill`: input and signals for a running execution."""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import trio

from tests import procs
from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle


async def _running(wb: DaemonHandle, command: str, **body: Any) -> str:
    record = await wb.start(command, **body)
    with trio.fail_after(30):
        while record["status"] == "queued":
            await trio.sleep(0.01)
            record = (await wb.client.get(f"/v1/executions/{record['executionId']}")).json()
    execution_id: str = record["executionId"]
    return execution_id


async def _stdout(wb: DaemonHandle, eid: str) -> str:
    text: str = (await wb.client.get(f"/v1/executions/{eid}")).json()["preview"]["stdout"]
    return text


async def test_send_text_then_stdin_with_eof(cli: Cli, wb: DaemonHandle) -> None:
    """TEXT gets a newline; `-` sends stdin's bytes as they are; --eof closes stdin."""
    eid = await _running(
        wb, 'read -r a; read -r b; cat > rest; echo "$a|$b|$(od -An -c rest | tr -s " ")"', openStdin=True
    )
    await cli.ok("send", eid, "one")
    await cli.ok("send", eid, "two", "--no-record")
    await cli.ok("send", eid, "-", "--eof", stdin=b"\x00x\n")
    record = await wb.wait(eid)
    assert record["status"] == "completed", record
    assert record["preview"]["stdout"] == "one|two| \\0 x \\n\n"
    inputs = [e for e in await wb.events(eid) if e["eventType"] == "input"]
    assert [e["inputDelta"] for e in inputs] == ["one\n", None, "\x00x\n"]
    late = await cli("send", eid, "three")
    assert late.code != 0 and "conflict" in late.error


async def test_send_of_more_than_the_backlog_waits_for_a_slow_reader(cli: Cli, wb: DaemonHandle) -> None:
    """3 MB through `send -` to a program that reads only after a while: three pieces, the later
    ones refused (`input_backlog`) until it reads, then sent again: it gets every byte once, in order."""
    data = os.urandom(3_000_000)
    eid = await _running(
        wb, "sleep 2; cat > got; wc -c < got; sha256sum < got | cut -d' ' -f1", openStdin=True
    )
    await cli.ok("send", "--eof", "--no-record", eid, "-", stdin=data)
    record = await wb.wait(eid)
    assert record["status"] == "completed", record
    assert record["preview"]["stdout"] == f"3000000\n{hashlib.sha256(data).hexdigest()}\n"


async def test_send_that_gives_up_says_how_many_bytes_were_taken(cli: Cli, wb: DaemonHandle) -> None:
    """A program that never reads and then ends: its first piece was taken, the rest not: exit 1,
    and the message says how many bytes went through (so that a retry sends the rest)."""
    eid = await _running(wb, "sleep 2", openStdin=True)
    ran = await cli("send", eid, "-", stdin=b"x" * 3_000_000)
    assert ran.code == 1, ran
    assert "the first 1048576 bytes of the input were taken" in ran.error, ran
    assert "conflict" in ran.error, ran
    inputs = [e for e in await wb.events(eid) if e["eventType"] == "input"]
    assert [e["inputBytes"] for e in inputs] == [1048576]


async def test_send_timeout_bounds_the_wait_for_a_reader(cli: Cli, wb: DaemonHandle) -> None:
    """`--timeout`: to a program that never reads, the first piece is taken and the second waits
    that long (not the default minute), then exit 1 saying how much was taken; `--timeout` that
    is no duration is a usage error."""
    eid = await _running(wb, "sleep 300", openStdin=True)
    try:
        began = time.monotonic()
        ran = await cli("send", "--timeout", "500ms", eid, "-", stdin=b"x" * 2_200_000)
        assert ran.code == 1, ran
        assert 0.5 <= time.monotonic() - began < 30, ran
        assert "input_backlog" in ran.error, ran
        assert "the first 1048576 bytes of the input were taken" in ran.error, ran
        bad = await cli("send", "--timeout", "soon", eid, "x")
        assert bad.code == 2 and "--timeout" in bad.error, bad
    finally:
        await wb.client.post(f"/v1/executions/{eid}/cancel", json={})
    inputs = [e for e in await wb.events(eid) if e["eventType"] == "input"]
    assert [e["inputBytes"] for e in inputs] == [1048576]


async def test_kill_sends_a_signal_without_ending_the_tree(cli: Cli, wb: DaemonHandle) -> None:
    eid = await _running(wb, "trap 'echo got-usr1' USR1; touch ready; while :; do sleep 0.05; done")
    ready = wb.data_dir  # the workspace is under the data dir; wait for the trap to be set
    with trio.fail_after(30):
        while not list(ready.rglob("ready")):  # noqa: ASYNC110 - a file the process under test writes
            await trio.sleep(0.02)
    await cli.ok("kill", "-s", "USR1", eid)
    with trio.fail_after(30):
        while "got-usr1" not in await _stdout(wb, eid):  # noqa: ASYNC110 - a test's look at the record
            await trio.sleep(0.02)
    assert (await wb.client.get(f"/v1/executions/{eid}")).json()["status"] == "running"
    bad = await cli("kill", "-s", "KILL", eid)
    assert bad.code == 2 and "cancel" in bad.error
    await cli.ok("cancel", "--now", eid)


async def test_run_it_under_a_real_terminal(cli: Cli, wb: DaemonHandle) -> None:
    """`run -it` on a pty: raw keys reach the program, our size is its size, Ctrl-C interrupts its
    foreground job (not the shell), and it exits like the execution."""
    term = await cli.terminal(
        "run", "-it", "--", "PS1='$ ' exec bash --norc --noprofile -i", rows=33, cols=99
    )
    try:
        await term.expect(r"\$ ")
        term.type(b"stty size\r")
        await term.expect(r"33 99")
        term.type(b"sleep 300; echo not-reached\r")
        await term.expect(r"sleep 300")
        await procs.eventually(lambda: procs.in_foreground(["sleep", "300"]))
        term.type(b"\x03")  # Ctrl-C, sent as a byte: the execution's terminal makes it SIGINT
        term.type(b"echo alive-$((6*7))\r")
        await term.expect(r"alive-42")
        term.type(b"exit 5\r")
        assert await term.finish() == 5
        assert b"not-reached\r\n" not in bytes(term.screen).replace(b"echo not-reached", b"")
    finally:
        term.close()


async def test_detach_then_attach_replays_and_goes_on(cli: Cli, wb: DaemonHandle) -> None:
    """Ctrl-P Ctrl-Q leaves it running; `attach` replays its screen from the journal and goes live."""
    term = await cli.terminal("run", "-it", "--", "echo first-line; read -r x; echo got-$x")
    try:
        await term.expect(r"first-line")
        term.type(b"\x10\x11")
        assert await term.finish() == 0
        assert b"detached from" in term.screen
    finally:
        term.close()
    records = (await wb.client.get("/v1/executions", params={"limit": 1})).json()["executions"]
    eid = records[0]["executionId"]
    assert records[0]["status"] == "running" and records[0]["tty"] is True
    again = await cli.terminal("attach", eid)
    try:
        await again.expect(r"first-line")  # replayed from the journal
        again.type(b"yes\r")
        await again.expect(r"got-yes")
        assert await again.finish() == 0
    finally:
        again.close()
    ended = await cli("attach", eid)
    assert ended.code == 2 and "has ended" in ended.error


async def test_run_i_stops_typing_into_a_tree_that_closed_its_stdin(cli: Cli, wb: DaemonHandle) -> None:
    """As a shell pipe's writer: input nothing reads any more is dropped, and the run goes on to
    its own end and exit status (before, `run -i` failed with 125 and cancelled it)."""
    script = 'read -r a; exec 0<&-; echo "got $a"; sleep 1; echo done'
    # "two" is typed once its stdin is closed ("got" comes after the close).
    ran = await cli.typing(["run", "-i", "--", script], b"one\n", b"got one\n", b"two\n")
    assert ran == (0, b"got one\ndone\n", b"")
