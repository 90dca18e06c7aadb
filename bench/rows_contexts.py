"""Row 18: code in a code context (a warm interpreter) against a new interpreter per run."""

from __future__ import annotations

import subprocess

from bench.context import Context
from bench.procs import interpreter_on_path
from bench.rows_latency import ms, run_wait
from bench.stats import alternate, median, timed_sync
from bench.table import Line
from bench.wire import HttpError

FIGURE = "python `pass` in a code context, p50"
BASELINE = "`python3 -c pass` as a process, p50"
TARGET = "ratio ≤ 0.3"


async def row19_context(ctx: Context) -> list[Line]:
    """`workbench_code` `pass` with `contextId` (run + wait, foreground) vs a fresh interpreter."""
    daemon = await ctx.main_daemon()
    client = daemon.client
    from workbench.core.images import EXECUTION_PATH

    python = interpreter_on_path("python3", EXECUTION_PATH)
    if python is None:
        return [
            Line(19, FIGURE, baseline=BASELINE, target=TARGET, error="no python3 on the executions' PATH")
        ]
    try:
        made = (await client.request("POST", "/v1/contexts", {"language": "python"})).json()
    except HttpError as exc:
        return [Line(19, FIGURE, baseline=BASELINE, target=TARGET, error=str(exc))]
    if made["status"] != "ready":
        return [Line(19, FIGURE, baseline=BASELINE, target=TARGET, error=f"the context: {made['reason']}")]
    context_id = made["contextId"]
    n = ctx.n(300, 50)
    try:
        in_context = run_wait(
            client, "workbench_code", None, language="python", code="pass", contextId=context_id
        )
        process = timed_sync(lambda: subprocess.run([python, "-c", "pass"], check=True))
        warm, base = await alternate(n, in_context, process, warmup=5)
    finally:
        await client.request("DELETE", f"/v1/contexts/{context_id}", check=False)
    ratio = median(warm) / median(base)
    return [
        Line(
            19,
            FIGURE,
            ms(warm, 50),
            baseline=BASELINE,
            baseline_value=ms(base, 50),
            target=TARGET,
            met=ratio <= 0.3,
            samples=n,
            note="through the HTTP API, start and wait in one request",
        )
    ]
