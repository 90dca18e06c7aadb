"""Keystroke echo through a terminal execution (row 23): `POST .../input` of one byte to a `tty: true`
execution running `cat` in raw mode, until that byte comes back in its SSE stream; against the same
`cat` on a local pseudo-terminal made by hand, one byte written to its master and read back."""

from __future__ import annotations

import json
import os
import time

import trio

from bench.context import Context
from bench.rows_latency import ms
from bench.stats import alternate
from bench.table import Line
from bench.wire import SseParser

RAW_CAT = "stty raw -echo; echo ready; exec cat"


async def row23_tty_echo(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    client = daemon.client
    n = ctx.n(300, 100)
    record = await client.start(command=RAW_CAT, background=True, tty=True)
    execution_id = record["executionId"]
    echoed_send, echoed = trio.open_memory_channel[str](1000)
    main, child = os.openpty()
    try:
        local = await trio.lowlevel.open_process(
            ["bash", "-c", RAW_CAT], stdin=child, stdout=child, stderr=child, start_new_session=True
        )
    finally:
        os.close(child)
    try:
        async with trio.open_nursery() as nursery:

            async def follow() -> None:
                parser = SseParser()
                async with client.stream(f"/v1/executions/{execution_id}/events/stream") as body:
                    async for chunk in body:
                        for event in parser.feed(chunk):
                            if event.event == "output":
                                await echoed_send.send(json.loads(event.data)["outputDelta"] or "")

            nursery.start_soon(follow)
            seen = ""
            while "ready" not in seen:
                seen += await echoed.receive()
            await _read_local(main, b"ready")

            async def through_workbench() -> float:
                start = time.perf_counter()
                await client.request("POST", f"/v1/executions/{execution_id}/input", {"data": "x"})
                got = ""
                while "x" not in got:
                    got += await echoed.receive()
                return time.perf_counter() - start

            async def local_pty() -> float:
                start = time.perf_counter()
                os.write(main, b"x")
                await _read_local(main, b"x")
                return time.perf_counter() - start

            async with ctx.profiled(daemon, "row 23 tty echo"):
                figure, base = await alternate(n, through_workbench, local_pty, warmup=20)
            await client.cancel(execution_id)
            nursery.cancel_scope.cancel()
    finally:
        local.kill()
        with trio.CancelScope(shield=True):
            await local.wait()
        os.close(main)
    p99 = ms(figure, 99)
    return [
        Line(
            23,
            "keystroke echo through `tty: true` (POST input → byte in the SSE stream), p50",
            ms(figure, 50),
            baseline="the same `cat` on a local pty by hand, p50",
            baseline_value=ms(base, 50),
            samples=n,
        ),
        Line(
            23,
            "keystroke echo through `tty: true`, p99",
            p99,
            baseline="the same `cat` on a local pty by hand, p99",
            baseline_value=ms(base, 99),
            target="p99 ≤ 20 ms",
            met=p99 <= 20,
            samples=n,
        ),
    ]


async def _read_local(fd: int, wanted: bytes) -> None:
    got = b""
    while wanted not in got:
        await trio.lowlevel.wait_readable(fd)
        got += os.read(fd, 4096)
