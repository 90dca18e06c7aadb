"""Storage and load: the store's bytes per byte of journaled output (row 24), and 1,000 clients at
once, each starting one execution and waiting on it (row 25)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import trio

from bench.context import Context
from bench.procs import ROOT, TOKEN, VENV_PYTHON, Daemon, free_port
from bench.stats import median, percentile
from bench.table import MS, Line
from bench.wire import Client, _Connection

STORE_TARGET = 1.2
CLIENTS = 1000


def _store_used(data_dir: Path) -> int:
    """The bytes the store's pages hold (free pages left out), as any reader sees them, WAL included."""
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * page_size)
    finally:
        conn.close()


async def row24_store_bytes(ctx: Context) -> list[Line]:
    size = ctx.n(20_000_000, 5_000_000)
    # A budget above the output: every byte is journaled as events, none kept only as a file.
    daemon = await ctx.start_daemon(
        "store-bytes", {"WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES": str(2 * size)}
    )
    commands = {
        "binary (NUL bytes, `head -c N /dev/zero`)": f"head -c {size} /dev/zero",
        "text (base64 lines)": f"head -c {size * 3 // 4} /dev/urandom | base64",
    }
    lines = []
    try:
        client = daemon.client
        await client.start(command="true", waitTimeoutMs=30_000)
        for what, command in commands.items():
            before = _store_used(daemon.data_dir)
            record = await client.start(command=command, waitTimeoutMs=120_000)
            journaled = record["output"]["eventBytes"]
            grown = _store_used(daemon.data_dir) - before
            ratio = grown / journaled if journaled else None
            lines.append(
                Line(
                    24,
                    f"store bytes per byte of output, {what}",
                    grown / 1e6,
                    unit="MB",
                    baseline=f"the output journaled as events ({journaled / 1e6:.0f} MB)",
                    baseline_value=journaled / 1e6,
                    ratio=ratio,
                    target=f"≤ {STORE_TARGET}",
                    met=ratio is not None and ratio <= STORE_TARGET and record["status"] == "completed",
                    samples=1,
                    note=f"{record['status']}; {record['output']['stdoutBytes']} bytes written",
                )
            )
            await client.delete(record["executionId"])
    finally:
        await ctx.registry.stop_daemon(daemon)
    return lines


async def _start_and_wait(port: int, results: list[float], failures: list[str]) -> None:
    """One client: a connection of its own, one start, one wait on it; never retried."""
    began = time.perf_counter()
    try:
        conn = _Connection(await trio.open_tcp_stream("127.0.0.1", port))
    except OSError as exc:
        failures.append(f"connect: {exc}")
        return
    try:
        body = json.dumps({"command": "true", "background": True}).encode()
        started = await _exchange(conn, "POST", "/v1/executions/workbench_bash", body, port)
        wait = json.dumps({"waitTimeoutMs": 120_000}).encode()
        answer = await _exchange(conn, "POST", f"/v1/executions/{started['executionId']}/wait", wait, port)
        if answer["execution"]["status"] != "completed":
            failures.append(f"ended {answer['execution']['status']}")
            return
        results.append(time.perf_counter() - began)
    except (OSError, EOFError, trio.BrokenResourceError, ValueError, KeyError) as exc:
        failures.append(f"{type(exc).__name__}: {exc}")
    finally:
        await conn.stream.aclose()


async def _exchange(conn: _Connection, method: str, path: str, body: bytes, port: int) -> Any:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    await conn.stream.send_all(head.encode("latin-1") + body)
    status, headers = await conn.read_head()
    content = b"".join([piece async for piece in conn.chunks(headers)])
    if not 200 <= status < 300:
        raise ValueError(f"HTTP {status}: {content[:200]!r}")
    return json.loads(content)


async def row25_clients(ctx: Context) -> list[Line]:
    clients = ctx.n(CLIENTS, 300)
    daemon = await ctx.start_daemon("clients", {"WORKBENCH_MAX_QUEUED_EXECUTIONS": str(clients + 100)})
    try:
        return await _clients(ctx, daemon, clients)
    finally:
        await ctx.registry.stop_daemon(daemon)


async def _clients(ctx: Context, daemon: Daemon, clients: int) -> list[Line]:
    alone: list[float] = []
    for _ in range(ctx.n(30, 10)):
        one: list[float] = []
        failed: list[str] = []
        await _start_and_wait(daemon.port, one, failed)
        if failed:
            raise RuntimeError(f"a lone client failed: {failed[0]}")
        alone.extend(one)
    results: list[float] = []
    failures: list[str] = []
    began = time.perf_counter()
    async with ctx.profiled(daemon, f"row 25 {clients} clients"), trio.open_nursery() as nursery:
        for _ in range(clients):
            nursery.start_soon(_start_and_wait, daemon.port, results, failures)
    elapsed = time.perf_counter() - began
    p99 = percentile(results, 99) * 1000 if results else None
    single = median(alone) * 1000
    answered = len(results)
    note = (
        f"{answered}/{clients} answered in {elapsed:.1f} s (p50 {percentile(results, 50) * 1000:.0f} ms)"
        if results
        else "none answered"
    )
    if failures:
        note += f"; {len(failures)} failed, e.g. {failures[0][:80]}"
    await Client("127.0.0.1", daemon.port, TOKEN).aclose()
    return [
        Line(
            25,
            f"{clients} clients at once, each start + wait of `true`: p99",
            p99,
            unit=MS,
            baseline="one client alone, the same start + wait (median)",
            baseline_value=single,
            target="every one answered, none lost",
            met=answered == clients and not failures,
            samples=answered,
            note=note,
        )
    ]


SSE_EVENTS = 100_000
SSE_TARGET = 50_000


async def _read_stream(port: int, path: str, headers: dict[str, str]) -> tuple[int, float, bytes]:
    """(events, seconds, the bytes) of one SSE stream read to its end."""
    client = Client("127.0.0.1", port, TOKEN)
    chunks = []
    began = time.perf_counter()
    async with client.stream(path, headers) as body:
        async for chunk in body:
            chunks.append(chunk)
    elapsed = time.perf_counter() - began
    data = b"".join(chunks)
    return data.count(b"\nevent: "), elapsed, data


async def row26_sse_rate(ctx: Context) -> list[Line]:
    events = ctx.n(SSE_EVENTS, 20_000)
    # Deltas of 4 bytes at most: 4 bytes of output per event, and every one journaled.
    daemon = await ctx.start_daemon(
        "sse-rate",
        {
            "WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES": "4",
            "WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES": str(8 * events),
        },
    )
    try:
        record = await daemon.client.start(
            command=f"head -c {4 * events} /dev/zero | tr '\\0' a", waitTimeoutMs=120_000
        )
        path = f"/v1/executions/{record['executionId']}/events/stream"
        ours: list[float] = []
        theirs: list[float] = []
        count, _, frames = await _read_stream(daemon.port, path, {})  # warm-up, and the frames
        frames_path = ctx.scratch("sse-rate") / "frames"
        frames_path.write_bytes(frames)
        port = free_port()
        ctx.registry.spawn([VENV_PYTHON, "-m", "bench.sse_minimal", str(frames_path), str(port)], cwd=ROOT)
        await _wait_port(port)
        for _ in range(ctx.n(5, 2)):
            n, seconds, _ = await _read_stream(daemon.port, path, {})
            ours.append(n / seconds)
            m, seconds, _ = await _read_stream(port, "/stream", {})
            theirs.append(m / seconds)
    finally:
        await ctx.registry.stop_daemon(daemon)
    rate, base = median(ours), median(theirs)
    return [
        Line(
            26,
            f"one SSE client replaying {count} events: events/s",
            rate,
            unit="",
            baseline="a minimal quart-trio SSE endpoint writing the same frames in the same writes",
            baseline_value=base,
            target=f"≥ {SSE_TARGET:,} events/s",
            met=rate >= SSE_TARGET,
            samples=len(ours),
            note=f"{len(frames) / count:.0f} bytes an event; median of {len(ours)} replays of the stream",
        )
    ]


async def _wait_port(port: int) -> None:
    with trio.fail_after(20):
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                await trio.sleep(0.05)
                continue
            await stream.aclose()
            return
