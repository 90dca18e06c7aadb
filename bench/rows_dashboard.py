"""The dashboard: a line written by the process to that line in the page's DOM (row 18)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import trio

from bench.context import Context
from bench.procs import REAL_PYTHON, ROOT, TOKEN, VENV_PYTHON
from bench.stats import percentile
from bench.table import Line
from bench.wire import Client, SseParser

#: Waits for the file `go`, then prints time.time_ns() every 10 ms, N times.
WRITER = """\
import os, sys, time
n = int(sys.argv[1])
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
next_at = time.monotonic()
for _ in range(n):
    sys.stdout.write(f"{time.time_ns()}\\n")
    sys.stdout.flush()
    next_at += 0.01
    time.sleep(max(0.0, next_at - time.monotonic()))
"""


async def _bare_sse(client: Client, execution_id: str, connected: trio.Event) -> dict[str, int]:
    """When each line reached a bare SSE client (ns), by its text."""
    parser = SseParser()
    got: dict[str, int] = {}
    partial = ""
    async with client.stream(f"/v1/executions/{execution_id}/events/stream") as body:
        async for piece in body:
            received = time.time_ns()
            for event in parser.feed(piece):
                connected.set()
                if event.event == "output":
                    text = partial + json.loads(event.data)["outputDelta"]
                    *done, partial = text.split("\n")
                    for line in done:
                        got.setdefault(line, received)
    return got


async def _one_round(ctx: Context, writer: Path, n: int, index: int) -> tuple[list[float], list[float]]:
    daemon = await ctx.main_daemon()
    go = ctx.scratch("dashboard") / f"go-{index}"
    record = await daemon.client.start(command=f"{REAL_PYTHON} {writer} {n} {go}", background=True)
    execution_id = record["executionId"]
    page = ctx.registry.spawn(
        [VENV_PYTHON, "-m", "bench.page_follower", daemon.url, TOKEN, execution_id, str(n)],
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
    )
    assert page.stdout is not None
    ready = await trio.to_thread.run_sync(page.stdout.readline)
    if ready.strip() != b"ready":
        raise RuntimeError(f"the page did not open: {ready!r}")
    sse: dict[str, int] = {}
    async with trio.open_nursery() as nursery:
        connected = trio.Event()

        async def follow() -> None:
            sse.update(await _bare_sse(daemon.client, execution_id, connected))

        nursery.start_soon(follow)
        await connected.wait()
        go.touch()
    out = await trio.to_thread.run_sync(page.stdout.read)
    await trio.to_thread.run_sync(page.wait)
    dom = {text: at for text, at in json.loads(out)}
    lines = [line for line in sse if line in dom][3:]  # the first may predate a settled page
    if len(lines) < n - 3:
        raise RuntimeError(f"the page showed {len(dom)} and the SSE client got {len(sse)} of {n} lines")
    return [(dom[t] - int(t)) / 1e6 for t in lines], [(sse[t] - int(t)) / 1e6 for t in lines]


async def row18_dashboard(ctx: Context) -> list[Line]:
    writer = ctx.scratch("dashboard") / "writer.py"
    writer.write_text(WRITER)
    rounds, n = ctx.n(3, 1), ctx.n(300, 150)
    page: list[float] = []
    bare: list[float] = []
    daemon = await ctx.main_daemon()
    async with ctx.profiled(daemon, "row 18 dashboard latency"):
        for index in range(rounds):
            ours, theirs = await _one_round(ctx, writer, n, index)
            page += ours
            bare += theirs
    p99 = percentile(page, 99)
    return [
        Line(
            18,
            "line in the dashboard's DOM, p50",
            percentile(page, 50),
            baseline="the same line at a bare SSE client, p50",
            baseline_value=percentile(bare, 50),
            samples=len(page),
        ),
        Line(
            18,
            "line in the dashboard's DOM, p99",
            p99,
            baseline="the same line at a bare SSE client, p99",
            baseline_value=percentile(bare, 99),
            target="p99 ≤ 50 ms",
            met=p99 <= 50,
            samples=len(page),
            note="a line with time.time_ns() every 10 ms, followed by the page and the SSE client at once",
        ),
    ]
