"""The agent's face: the MCP `bash` tool's round trip (13) and the cost of the record's preview (14)."""

from __future__ import annotations

import os
import time
from typing import Any

from bench.context import Context
from bench.procs import TOKEN, VENV_PYTHON
from bench.rows_latency import ms, run_wait
from bench.stats import Measure, alternate, median
from bench.table import Line

#: Output of the preview row's command: more than the default `previewBytes`, so it is elided.
SEQ = "seq 1 5000"  # 23893 bytes


async def row14_mcp_bash(ctx: Context) -> list[Line]:
    """The `bash` tool of `workbench mcp` running `true`, driven by the official MCP client over
    stdio, against the bare HTTP foreground start of `true` on the same daemon."""
    title = "MCP `bash` tool round trip of `true`, p50"
    baseline = "HTTP foreground start of `true`, p50"
    try:
        from mcp import ClientSession, StdioServerParameters, stdio_client
    except ImportError:
        return [
            Line(14, title, baseline=baseline, target="ratio ≤ 1.5", error="the mcp extra is not installed")
        ]
    daemon = await ctx.main_daemon()
    params = StdioServerParameters(
        command=VENV_PYTHON,
        args=["-m", "workbench", "mcp", "--url", daemon.url, "--token", TOKEN],
        env={"WORKBENCH_DATA_DIR": str(ctx.scratch("mcp-home"))},
    )
    n = ctx.n(200, 60)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def tool() -> float:
                start = time.perf_counter()
                result = await session.call_tool("bash", {"command": "true"})
                elapsed = time.perf_counter() - start
                data: Any = result.structured_content
                if result.is_error or not isinstance(data, dict) or data.get("status") != "completed":
                    raise RuntimeError(f"the bash tool answered {result}")
                return elapsed

            async with ctx.profiled(daemon, "row 14 MCP bash true"):
                figure, base = await alternate(n, tool, run_wait(daemon.client, command="true"), warmup=10)
    ratio = median(figure) / median(base)
    return [
        Line(
            14,
            title,
            ms(figure, 50),
            baseline=baseline,
            baseline_value=ms(base, 50),
            target="ratio ≤ 1.5",
            met=ratio <= 1.5,
            samples=n,
            note="the MCP client and `workbench mcp` (the Python client inside) add JSON-RPC over two "
            "pipes, argument checks and one HTTP request made with httpx",
        )
    ]


def _get(client: Any, execution_id: str) -> Measure:
    async def measure() -> float:
        start = time.perf_counter()
        record = await client.get(execution_id)
        elapsed = time.perf_counter() - start
        if "preview" not in record:
            raise RuntimeError("the record has no preview")
        return elapsed

    return measure


async def row15_preview(ctx: Context) -> list[Line]:
    """The record with its preview (the default 16384 bytes of each stream) against the same with
    `previewBytes: 0`: a foreground run of a command printing 24 KB (the preview is made and kept at
    its end), and a GET of a running execution (made from its spool files' two ends at each read)."""
    daemon = await ctx.main_daemon()
    client = daemon.client
    n = ctx.n(200, 60)
    async with ctx.profiled(daemon, "row 15 preview"):
        run_with, run_without = await alternate(
            n,
            run_wait(client, command=SEQ),
            run_wait(client, command=SEQ, previewBytes=0),
            warmup=10,
        )
        command = "seq 1 200000; sleep 600"  # 1.3 MB written, then it waits
        live = [await client.start(command=command, background=True, previewBytes=b) for b in (16384, 0)]
        for record in live:
            while (await client.get(record["executionId"]))["output"]["stdoutBytes"] < 1_288_895:
                pass
        try:
            get_with, get_without = await alternate(
                n, _get(client, live[0]["executionId"]), _get(client, live[1]["executionId"]), warmup=10
            )
        finally:
            for record in live:
                await client.request("POST", f"/v1/executions/{record['executionId']}/cancel", {})
    run_ratio = median(run_with) / median(run_without)
    get_ratio = median(get_with) / median(get_without)
    return [
        Line(
            15,
            f"run+wait `{SEQ}` with its preview, p50",
            ms(run_with, 50),
            baseline="the same with previewBytes 0, p50",
            baseline_value=ms(run_without, 50),
            target="ratio ≤ 1.1",
            met=run_ratio <= 1.1,
            samples=n,
        ),
        Line(
            15,
            "GET of a running record (1.3 MB written) with its live preview, p50",
            ms(get_with, 50),
            baseline="the same with previewBytes 0, p50",
            baseline_value=ms(get_without, 50),
            target="ratio ≤ 1.1",
            met=get_ratio <= 1.1,
            samples=n,
        ),
    ]
