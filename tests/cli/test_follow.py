"""Following across a daemon restart, and the progress line on a terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

import trio

from tests.cli.conftest import Cli
from tests.client.restart import closed, keeping_daemon, restart
from tests.conftest import DaemonHandle

LINES = 30
SLOW = f"for i in $(seq 1 {LINES}); do echo line $i; echo err $i >&2; sleep 0.05; done"


async def test_logs_and_events_follow_resume_after_a_restart(make_daemon: Any, tmp_path: Any) -> None:
    """Promise 2: a follower that lost its connection resumes with no gap and no duplicate."""
    first = await keeping_daemon(make_daemon)
    cli = Cli(first.url, tmp_path / "client-home")
    started = await first.start(SLOW)
    execution_id = started["executionId"]
    logs = await trio.lowlevel.open_process(
        cli.argv("logs", "-f", execution_id), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli.env()
    )
    events = await trio.lowlevel.open_process(
        cli.argv("events", "-f", "--json", execution_id), stdout=subprocess.PIPE, env=cli.env()
    )
    out, err, trace = bytearray(), bytearray(), bytearray()
    both_following = trio.Event()

    async def read_all(stream: Any, into: bytearray) -> None:
        while chunk := await stream.receive_some():
            into += chunk
            if b"line 5\n" in out and trace.count(b"\n") >= 5:
                both_following.set()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for stream, into in ((logs.stdout, out), (logs.stderr, err), (events.stdout, trace)):
                nursery.start_soon(read_all, stream, into)
            await both_following.wait()
            second = await restart(make_daemon, first)
            await logs.wait()
            await events.wait()
    assert logs.returncode == 0 and events.returncode == 0, err[-500:]
    assert bytes(out) == b"".join(b"line %d\n" % i for i in range(1, LINES + 1))
    assert bytes(err) == b"".join(b"err %d\n" % i for i in range(1, LINES + 1))
    sequences = [json.loads(line)["sequence"] for line in trace.decode().splitlines()]
    assert sequences == list(range(1, len(sequences) + 1))
    record = await second.wait(execution_id)
    assert record["status"] == "completed" and sequences[-1] == record["lastSequence"]


async def test_a_long_wait_shows_a_progress_line_on_a_terminal(cli: Cli, wb: DaemonHandle) -> None:
    """On a terminal: elapsed time and DONE/TOTAL as a bar; not a terminal: nothing extra (other tests)."""
    started = await wb.start(
        'for i in 1 2 3; do echo "$i/4 step $i" >> "$WORKBENCH_PROGRESS"; sleep 0.5; done'
    )
    main, child = os.openpty()
    try:
        process = await trio.lowlevel.open_process(
            cli.argv("wait", started["executionId"]), stdout=child, stderr=child, env=cli.env()
        )
        os.close(child)
        child = -1
        seen = bytearray()

        async def drain() -> None:
            while True:
                try:
                    # Abandoned if the test's bound runs out: a blocked read is not cancellable.
                    data = await trio.to_thread.run_sync(os.read, main, 4096, abandon_on_cancel=True)
                except OSError:  # EIO once the child side is closed
                    return
                if not data:
                    return
                seen.extend(data)

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(drain)
                await process.wait()
    finally:
        if child >= 0:
            os.close(child)
        os.close(main)
    assert process.returncode == 0
    text = seen.decode(errors="replace")
    assert "waiting" in text and "[#" in text and "/4" in text, text
    assert text.endswith("\r\x1b[K"), "the line is erased at the end"


async def test_run_shows_a_progress_line_on_a_terminal(cli: Cli) -> None:
    """The bar is drawn between output lines, erased before each, and gone at the end."""
    script = 'for i in 1 2 3; do echo "out $i"; echo "$i/3 step $i" >> "$WORKBENCH_PROGRESS"; sleep 0.7; done'
    terminal = await cli.terminal("run", "--", script)
    try:
        await terminal.expect(rb"running \d+\.\ds \[#+ *\] [12]/3 step [12]")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == 0
    screen = bytes(terminal.screen)
    assert screen.replace(b"\r\x1b[K", b"").count(b"out ") == 3
    # Each line of output starts where the progress line was erased: never glued to it.
    assert re.findall(rb"(?:^|\n|\r\x1b\[K)out \d", screen) and b"]out" not in screen
    assert screen.endswith(b"\r\x1b[K") or screen.rstrip().endswith(b"out 3")


async def test_ls_watch_redraws_the_table_in_place(cli: Cli, wb: DaemonHandle) -> None:
    running = await wb.start("sleep 2.5")
    terminal = await cli.terminal("ls", "--watch", rows=12, cols=90)
    try:
        await terminal.expect(rb"running ", "the table with the running execution")
        await terminal.expect(rb"completed ", "the same table, redrawn once it ended", seconds=30)
        terminal.type(b"\x03")
        status = await terminal.finish()
    finally:
        terminal.close()
    assert status == 0, "Ctrl-C is how --watch ends"
    screen = bytes(terminal.screen)
    assert b"\x1b[?25l" in screen and screen.rstrip(b"\r\n^C").endswith(b"\x1b[?25h"), "the cursor is back"
    redraws = screen.count(b"\r\x1b[")
    assert redraws >= 2, "drawn over itself, not scrolled"
    short = running["executionId"][:15]
    assert screen.count(short.encode()) >= 3
    # Every drawn line fits the width: moving up lands on the table's first line again.
    for line in re.split(rb"\n|\x1b\[2K", screen):
        assert len(re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\r", b"", line)) < 90


async def test_run_i_goes_on_typing_across_a_daemon_restart(make_daemon: Any, tmp_path: Any) -> None:
    """An input sent while the daemon restarts is sent again once it is back (as the output stream
    reconnects), instead of ending `run -i` and leaving its execution behind."""
    first = await keeping_daemon(make_daemon)
    cli = Cli(first.url, tmp_path / "client-home")
    script = 'read -r a; echo "got $a"; read -r b; echo "got $b"'
    port = int(first.url.rsplit(":", 1)[1])
    restarted: list[DaemonHandle] = []

    async def restarting() -> None:
        restarted.append(await restart(make_daemon, first))

    async def stopped(nursery: trio.Nursery) -> None:
        nursery.start_soon(restarting)
        await closed(port)  # "two" is typed while no daemon listens

    code, out, err = await cli.typing(["run", "-i", "--", script], b"one\n", b"got one\n", b"two\n", stopped)
    assert code == 0, (out, err)
    assert out == b"got one\ngot two\n", err


async def test_wait_goes_on_across_a_daemon_restart(make_daemon: Any, tmp_path: Any) -> None:
    """`workbench wait` asks again while the daemon stops and starts again, as `logs -f` does,
    and ends with the execution, instead of failing on the stop."""
    first = await keeping_daemon(make_daemon)
    cli = Cli(first.url, tmp_path / "client-home")
    execution_id = (await first.start("sleep 3; exit 4"))["executionId"]
    with trio.fail_after(60):
        waiting = await cli.open("wait", execution_id)
        await trio.sleep(0.5)
        await restart(make_daemon, first)
        assert waiting.stderr is not None
        err = b""
        while chunk := await waiting.stderr.receive_some():
            err += chunk
        await waiting.wait()
    assert waiting.returncode == 4, err
    assert b"unavailable" not in err, err
