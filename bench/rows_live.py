"""Live output: tail latency against the inotify floor (row 5), 200 followers of one run (row 6)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import subprocess
import time
from pathlib import Path

import trio

from bench.context import Context
from bench.procs import REAL_PYTHON, ROOT, TOKEN, VENV_PYTHON
from bench.stats import alternate, median, percentile
from bench.table import MS, Line
from bench.wire import Client, SseParser

#: Prints time.time_ns() every 10 ms, N times, after a short pause (so a follower is attached).
WRITER = """\
import sys, time
n = int(sys.argv[1])
time.sleep(0.3)
next_at = time.monotonic()
for _ in range(n):
    sys.stdout.write(f"{time.time_ns()}\\n")
    sys.stdout.flush()
    next_at += 0.01
    time.sleep(max(0.0, next_at - time.monotonic()))
"""
SKIP = 3  # the first samples may predate the follower's attachment


def _latencies(lines: list[tuple[int, str]]) -> list[float]:
    return [(received - int(text)) / 1e6 for received, text in lines[SKIP:]]


async def sse_tail(client: Client, writer: Path, n: int) -> list[float]:
    """Latencies (ms) of each line, from the writer's clock to its arrival in an SSE client."""
    record = await client.start(command=f"{REAL_PYTHON} {writer} {n}", background=True)
    execution_id = record["executionId"]
    parser = SseParser()
    got: list[tuple[int, str]] = []
    partial = ""
    async with client.stream(f"/v1/executions/{execution_id}/events/stream") as body:
        async for piece in body:
            received = time.time_ns()
            for event in parser.feed(piece):
                if event.event == "output":
                    text = partial + json.loads(event.data)["outputDelta"]
                    *done, partial = text.split("\n")
                    got.extend((received, line) for line in done)
    if len(got) != n:
        raise RuntimeError(f"the SSE follower got {len(got)} of {n} lines")
    return _latencies(got)


IN_MODIFY = 0x2
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000


class _Inotify:
    def __init__(self, path: Path) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(path), IN_MODIFY) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    async def wait(self) -> None:
        while True:
            try:
                os.read(self.fd, 64 * 1024)
                return
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self.fd)

    def close(self) -> None:
        os.close(self.fd)


async def inotify_tail(ctx: Context, writer: Path, n: int, index: int) -> list[float]:
    """The floor: the same writer into a file, read by a reader woken by inotify."""
    path = ctx.scratch("tail") / f"floor-{index}.out"
    path.touch()
    watch = _Inotify(path)
    reader = os.open(path, os.O_RDONLY)
    try:
        with open(path, "wb") as out:
            proc = ctx.registry.spawn([REAL_PYTHON, str(writer), str(n)], stdout=out, start_new_session=True)
        got: list[tuple[int, str]] = []
        partial = b""
        offset = 0
        with trio.fail_after(n * 0.01 + 30):
            while len(got) < n:
                await watch.wait()
                data = os.pread(reader, 1 << 20, offset)
                received = time.time_ns()
                offset += len(data)
                *done, partial = (partial + data).split(b"\n")
                got.extend((received, line.decode()) for line in done)
        proc.wait()
    finally:
        watch.close()
        os.close(reader)
    return _latencies(got)


async def row5_tail(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    writer = ctx.scratch("tail") / "writer.py"
    writer.write_text(WRITER)
    rounds, n = ctx.n(5, 2), ctx.n(200, 100)
    count = 0

    async def sse() -> list[float]:
        return await sse_tail(daemon.client, writer, n)

    async def floor() -> list[float]:
        nonlocal count
        count += 1
        return await inotify_tail(ctx, writer, n, count)

    ours: list[float] = []
    theirs: list[float] = []
    async with ctx.profiled(daemon, "row 5 tail latency"):
        for _ in range(rounds):
            ours += await sse()
            theirs += await floor()
    p99 = percentile(ours, 99)
    return [
        Line(
            5,
            "tail latency, SSE, p50",
            percentile(ours, 50),
            baseline="inotify reader of a file, p50",
            baseline_value=percentile(theirs, 50),
            samples=len(ours),
        ),
        Line(
            5,
            "tail latency, SSE, p99",
            p99,
            baseline="inotify reader of a file, p99",
            baseline_value=percentile(theirs, 99),
            target="p99 ≤ 20 ms",
            met=p99 <= 20,
            samples=len(ours),
            note="a line with time.time_ns() every 10 ms; latency = receipt − write",
        ),
    ]


FOLLOWERS = 200
LINES = 20_000


async def row6_fanout(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    client = daemon.client
    rounds = ctx.n(9, 2)
    scratch = ctx.scratch("fanout")
    checks: list[str] = []
    counter = 0

    async def one(followers: int) -> float:
        nonlocal counter
        counter += 1
        fifo = scratch / f"go-{counter}"
        os.mkfifo(fifo)
        command = f'read -r _ < {fifo}; for ((i = 1; i <= {LINES}; i++)); do echo "line $i"; done'
        record = await client.start(command=command, background=True)
        execution_id = record["executionId"]
        helper: subprocess.Popen[bytes] | None = None
        try:
            if followers:
                helper = ctx.registry.spawn(
                    [
                        VENV_PYTHON,
                        "-m",
                        "bench.followers",
                        str(daemon.port),
                        TOKEN,
                        execution_id,
                        str(followers),
                    ],
                    cwd=str(ROOT),
                    stdout=subprocess.PIPE,
                )
                assert helper.stdout is not None
                line = await trio.to_thread.run_sync(helper.stdout.readline)
                if line.strip() != b"ready":
                    raise RuntimeError(f"the followers did not start: {line!r}")
            await _open_gate(fifo)
            start = time.perf_counter()
            final = await client.wait_terminal(execution_id)
            elapsed = time.perf_counter() - start
            if final["status"] != "completed":
                raise RuntimeError(f"the chatty execution ended {final['status']}")
            if helper is not None:
                assert helper.stdout is not None
                summary = json.loads(await trio.to_thread.run_sync(helper.stdout.readline))
                helper.wait()
                expected = final["lastSequence"]
                if summary["complete"] != followers or summary["lastIds"] != [expected]:
                    raise RuntimeError(
                        f"{summary['complete']} of {followers} followers got every event "
                        f"(last ids {summary['lastIds']}, expected {expected})"
                    )
                if summary["lines"] != LINES:
                    raise RuntimeError(f"a follower got {summary['lines']} lines of {LINES}")
                checks.append(f"{expected} events")
            return elapsed
        finally:
            if helper is not None and helper.poll() is None:
                helper.kill()
                helper.wait()
            fifo.unlink(missing_ok=True)

    async def with_followers() -> float:
        return await one(FOLLOWERS)

    async def alone() -> float:
        return await one(0)

    async with ctx.profiled(daemon, "row 6 200 followers"):
        ours, theirs = await alternate(rounds, with_followers, alone, warmup=1)
    ratio = median(ours) / median(theirs)
    return [
        Line(
            6,
            f"{FOLLOWERS} SSE followers of one execution printing {LINES:,} lines: its wall time",
            median(ours) * 1000,
            unit=MS,
            baseline="the same execution with no follower",
            baseline_value=median(theirs) * 1000,
            target="ratio ≤ 1.2",
            met=ratio <= 1.2,
            samples=rounds,
            note=f"every follower got every event ({checks[-1] if checks else '?'} each); wall time = "
            "start signal → terminal record; followers in a process of their own",
        ),
    ]


async def _open_gate(fifo: Path) -> None:
    """Let the execution go: open its FIFO once it is reading it (non-blocking; retried)."""
    with trio.fail_after(30):
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                await trio.sleep(0.001)
                continue
            with contextlib.suppress(BlockingIOError):
                os.write(fd, b"go\n")
            os.close(fd)
            return
