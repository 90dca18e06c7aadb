"""A session's workspace and services: a 1 MiB file written and read back through the API against
`cp` (row 16), and the time to `ready` of `python -m http.server` against a loop polling its port
(row 17)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time

import trio

from bench.context import Context
from bench.procs import VENV_PYTHON, free_port
from bench.stats import alternate, percentile
from bench.table import Line

MIB = 1024 * 1024
#: How often the hand-made loop of row 17 tries the port.
POLL_S = 0.01


def _ms(values: list[float], q: float = 50) -> float:
    return percentile(values, q) * 1000


async def row16_file_round_trip(ctx: Context) -> list[Line]:
    """PUT then GET of 1 MiB (the bytes compared) against one `cp` of the same file."""
    daemon = await ctx.main_daemon()
    client = daemon.client
    scratch = ctx.scratch("files")
    data = os.urandom(MIB)
    source = scratch / "source.bin"
    source.write_bytes(data)
    target_dir = scratch / "copies"
    target_dir.mkdir(exist_ok=True)
    n = ctx.n(200, 50)
    session = f"bench-{secrets.token_hex(4)}"

    async def through_api() -> float:
        path = f"/v1/sessions/{session}/files/data/file.bin"
        start = time.perf_counter()
        await client.request("PUT", path, data)
        got = await client.request("GET", path)
        elapsed = time.perf_counter() - start
        if got.body != data:
            raise RuntimeError("the file read back differs from the one written")
        return elapsed

    async def by_cp() -> float:
        start = time.perf_counter()
        subprocess.run(["cp", str(source), str(target_dir / "file.bin")], check=True)
        return time.perf_counter() - start

    figure, base = await alternate(n, through_api, by_cp, warmup=5)
    await client.request("DELETE", f"/v1/sessions/{session}", check=False)
    ratio = _ms(figure) / _ms(base)
    return [
        Line(
            16,
            "1 MiB file PUT + GET through the API, p50",
            _ms(figure),
            baseline="`cp` of the same file, p50",
            baseline_value=_ms(base),
            target="ratio ≤ 3",
            met=ratio <= 3,
            samples=n,
            note=f"p90 {_ms(figure, 90):.2f} ms against {_ms(base, 90):.2f} ms",
        )
    ]


def _connectable(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def _poll(port: int) -> None:
    with trio.fail_after(60):
        while not _connectable(port):
            await trio.sleep(POLL_S)


async def row17_service_ready(ctx: Context) -> list[Line]:
    """Start to ready of `python -m http.server`: a service with `readiness.port`, waited on with
    `until: ready`, against the same server started as an ordinary background execution with its
    port tried every 10 ms by hand (what a client does without readiness), and, for scale, against
    the server spawned without the daemon, with the same loop."""
    daemon = await ctx.main_daemon()
    client = daemon.client
    n = ctx.n(30, 10)
    cwd = ctx.scratch("http-server")

    async def end(execution_id: str) -> None:
        await client.cancel(execution_id)
        await client.wait_terminal(execution_id)
        await client.delete(execution_id)

    def command(port: int) -> str:
        return f"exec {VENV_PYTHON} -m http.server {port} --bind 127.0.0.1"

    async def as_service() -> float:
        port = free_port()
        start = time.perf_counter()
        record = await client.start(
            command=command(port), background=True, service=True, readiness={"port": port}
        )
        execution_id = record["executionId"]
        wait = {"until": "ready", "waitTimeoutMs": 60_000}
        answer = (await client.request("POST", f"/v1/executions/{execution_id}/wait", wait)).json()
        elapsed = time.perf_counter() - start
        if not answer["execution"]["ready"]:
            raise RuntimeError(f"the service was not ready: {answer['execution']['status']}")
        if not _connectable(port):
            raise RuntimeError("ready, but nothing answers on the port")
        await end(execution_id)
        return elapsed

    async def polled_by_hand() -> float:
        port = free_port()
        start = time.perf_counter()
        record = await client.start(command=command(port), background=True)
        await _poll(port)
        elapsed = time.perf_counter() - start
        await end(record["executionId"])
        return elapsed

    async def without_daemon() -> float:
        port = free_port()
        start = time.perf_counter()
        proc = ctx.registry.spawn(
            [VENV_PYTHON, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=str(cwd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            await _poll(port)
            return time.perf_counter() - start
        finally:
            proc.kill()
            proc.wait()

    figure, polled, bare = await alternate(n, as_service, polled_by_hand, without_daemon, warmup=2)
    ratio = _ms(figure) / _ms(polled)
    return [
        Line(
            17,
            "`python -m http.server` service: start to ready, p50",
            _ms(figure),
            baseline="the same as a background execution, its port tried every 10 ms, p50",
            baseline_value=_ms(polled),
            target="ratio ≤ 1.2",
            met=ratio <= 1.2,
            samples=n,
            note=f"p90 {_ms(figure, 90):.1f} ms against {_ms(polled, 90):.1f} ms",
        ),
        Line(
            17,
            "the same service, against no daemon at all, p50",
            _ms(figure),
            baseline="spawned by hand, its port tried every 10 ms, p50",
            baseline_value=_ms(bare),
            samples=n,
            note="for scale: the whole start path of an execution is in the difference",
        ),
    ]
