"""Many daemons on one PostgreSQL journal (rows 20-22): the engine's cost against SQLite, a line
written on node A read on node B, and 500 jobs over 3 nodes against 1 node.

The PostgreSQL server is started here (`initdb`, `pg_ctl`, as the tests do) with its own
defaults (fsync on), so that its commits are as durable as SQLite's `synchronous = FULL`.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from tests import pg

from bench.context import Context
from bench.procs import REAL_PYTHON, Daemon
from bench.rows_latency import bash_true, ms, run_wait
from bench.rows_live import SKIP, WRITER
from bench.stats import alternate, median, percentile
from bench.table import SECONDS, Line
from bench.wire import Client, SseParser

JOBS = 500


@asynccontextmanager
async def _server() -> AsyncIterator[pg.PostgresServer]:
    server = await trio.to_thread.run_sync(lambda: pg.PostgresServer(durable=True))
    try:
        yield server
    finally:
        await trio.to_thread.run_sync(server.close)


async def _nodes(ctx: Context, server: pg.PostgresServer, label: str, names: str) -> list[Daemon]:
    url = await trio.to_thread.run_sync(server.url_for, ctx.root / f"pg-{label}")
    return [
        await ctx.start_daemon(f"{label}-{name}", {"WORKBENCH_STORE_URL": url, "WORKBENCH_NODE_ID": name})
        for name in names
    ]


def _unavailable(row: int, figure: str) -> list[Line] | None:
    if pg.pg_bin() is None:
        return [Line(row, figure, error="PostgreSQL is not installed (apt-get install postgresql)")]
    return None


async def row20_postgres_run_wait(ctx: Context) -> list[Line]:
    figure = "run+wait `true` on PostgreSQL, p50"
    if (missing := _unavailable(20, figure)) is not None:
        return missing
    sqlite = await ctx.main_daemon()
    n = ctx.n(300, 100)
    async with _server() as server:
        (node,) = await _nodes(ctx, server, "row18", "a")
        on_pg, on_sqlite, base = await alternate(
            n,
            run_wait(node.client, command="true"),
            run_wait(sqlite.client, command="true"),
            bash_true(),
            warmup=10,
        )
        await ctx.registry.stop_daemon(node)
    ratio = ms(on_pg, 50) / ms(on_sqlite, 50)
    return [
        Line(
            20,
            figure,
            ms(on_pg, 50),
            baseline="the same on SQLite, p50",
            baseline_value=ms(on_sqlite, 50),
            target="ratio ≤ 1.5",
            met=ratio <= 1.5,
            samples=n,
            note=f"subprocess.run(bash -c true) p50 {ms(base, 50):.2f} ms; PostgreSQL with fsync on",
        ),
        Line(
            20,
            "run+wait `true` on PostgreSQL, p99",
            ms(on_pg, 99),
            baseline="the same on SQLite, p99",
            baseline_value=ms(on_sqlite, 99),
            samples=n,
        ),
    ]


async def _tail(writer_node: Client, node: str, reader_node: Client, writer: Path, n: int) -> list[float]:
    """Latencies (ms) of each line written by a run on `node` and read on `reader_node`'s stream."""
    # Pinned: the writer runs on that node whichever node has a free slot.
    record = await writer_node.start(command=f"{REAL_PYTHON} {writer} {n}", background=True, node=node)
    parser = SseParser()
    got: list[tuple[int, str]] = []
    partial = ""
    async with reader_node.stream(f"/v1/executions/{record['executionId']}/events/stream") as body:
        async for piece in body:
            received = time.time_ns()
            for event in parser.feed(piece):
                if event.event == "output":
                    text = partial + json.loads(event.data)["outputDelta"]
                    *done, partial = text.split("\n")
                    got.extend((received, line) for line in done)
    if len(got) != n:
        raise RuntimeError(f"the follower got {len(got)} of {n} lines")
    return [(received - int(text)) / 1e6 for received, text in got[SKIP:]]


async def row21_cross_node_tail(ctx: Context) -> list[Line]:
    figure = "a line written on node A, read on node B's stream, p99"
    if (missing := _unavailable(21, figure)) is not None:
        return missing
    writer = ctx.scratch("nodes-tail") / "writer.py"
    writer.write_text(WRITER)
    rounds, n = ctx.n(5, 2), ctx.n(200, 100)
    across: list[float] = []
    same: list[float] = []
    async with _server() as server:
        a, b = await _nodes(ctx, server, "row19", "ab")
        for _ in range(rounds):
            across += await _tail(a.client, "a", b.client, writer, n)
            same += await _tail(a.client, "a", a.client, writer, n)
        for daemon in (a, b):
            await ctx.registry.stop_daemon(daemon)
    p99 = percentile(across, 99)
    return [
        Line(
            21,
            "a line written on node A, read on node B's stream, p50",
            percentile(across, 50),
            baseline="read on node A's own stream, p50",
            baseline_value=percentile(same, 50),
            samples=len(across),
        ),
        Line(
            21,
            figure,
            p99,
            baseline="read on node A's own stream, p99",
            baseline_value=percentile(same, 99),
            target="p99 ≤ 25 ms",
            met=p99 <= 25,
            samples=len(across),
            note="a line with time.time_ns() every 10 ms; B is woken by LISTEN/NOTIFY",
        ),
    ]


async def _jobs(clients: list[Client]) -> float:
    start = time.perf_counter()
    ids = []
    for i in range(JOBS):
        record = await clients[i % len(clients)].start(command="true", background=True)
        ids.append((clients[i % len(clients)], record["executionId"]))
    records = [await client.wait_terminal(eid) for client, eid in ids]
    bad = [r["status"] for r in records if r["status"] != "completed"]
    if bad:
        raise RuntimeError(f"{len(bad)} of {JOBS} did not complete: {bad[:3]}")
    return time.perf_counter() - start


async def row22_three_nodes(ctx: Context) -> list[Line]:
    figure = f"{JOBS} background `true` over 3 nodes (submitted round-robin, then all waited)"
    if (missing := _unavailable(22, figure)) is not None:
        return missing
    rounds = ctx.n(3, 1)
    three: list[float] = []
    one: list[float] = []
    async with _server() as server:
        nodes = await _nodes(ctx, server, "row20", "abc")
        single = await _nodes(ctx, server, "row20-single", "s")
        for _ in range(rounds):
            three.append(await _jobs([n.client for n in nodes]))
            one.append(await _jobs([single[0].client]))
        for daemon in [*nodes, *single]:
            await ctx.registry.stop_daemon(daemon)
    return [
        Line(
            22,
            figure,
            median(three),
            unit=SECONDS,
            baseline=f"the same {JOBS} on 1 node of PostgreSQL",
            baseline_value=median(one),
            samples=rounds,
            note="all nodes on this one machine: they share its cores, so the spread shows the "
            "claiming's cost, not more capacity",
        )
    ]
