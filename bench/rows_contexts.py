"""Row 19: code in a code context (a warm interpreter) against a new interpreter per run, and
`print(1)` in a context against a warm Jupyter kernel through `jupyter_client` (the `bench`
extra: `pip install -e '.[bench]'`; without it that line says so instead of a figure)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from bench.context import Context
from bench.procs import interpreter_on_path
from bench.rows_latency import ms, run_wait
from bench.stats import alternate, median, timed_sync
from bench.table import Line
from bench.wire import HttpError

FIGURE = "python `pass` in a code context, p50"
BASELINE = "`python3 -c pass` as a process, p50"
TARGET = "ratio ≤ 0.3"
JUPYTER_FIGURE = "python `print(1)` in a code context, p50"
JUPYTER_BASELINE = "`print(1)` in a warm Jupyter kernel (`jupyter_client`), p50"
JUPYTER_TARGET = "faster than the kernel (ratio < 1)"


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
        async with ctx.profiled(daemon, "row 19 code context"):
            warm, base = await alternate(n, in_context, process, warmup=5)
            printed = run_wait(
                client, "workbench_code", None, language="python", code="print(1)", contextId=context_id
            )
            against_jupyter = await _against_jupyter(printed, n)
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
        ),
        against_jupyter,
    ]


async def _against_jupyter(printed: Any, n: int) -> Line:
    """`print(1)` in the context (run + wait through the HTTP API) against the same code in a
    Jupyter kernel started once and warmed: `execute` until the kernel's `idle` status after
    its stream output, as a notebook sees a cell end."""
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return Line(
            19,
            JUPYTER_FIGURE,
            baseline=JUPYTER_BASELINE,
            target=JUPYTER_TARGET,
            error="jupyter_client and ipykernel are not installed (pip install -e '.[bench]')",
        )
    try:
        manager, kernel = start_new_kernel(
            kernel_name="python3", startup_timeout=60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except Exception as exc:  # a kernel that cannot start is this line's error, not the run's
        return Line(
            19, JUPYTER_FIGURE, baseline=JUPYTER_BASELINE, target=JUPYTER_TARGET, error=f"the kernel: {exc}"
        )
    try:

        async def in_kernel() -> float:
            return _kernel_round_trip(kernel)

        ours, theirs = await alternate(n, printed, in_kernel, warmup=5)
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    ratio = median(ours) / median(theirs)
    return Line(
        19,
        JUPYTER_FIGURE,
        ms(ours, 50),
        baseline=JUPYTER_BASELINE,
        baseline_value=ms(theirs, 50),
        target=JUPYTER_TARGET,
        met=ratio < 1,
        samples=n,
        note="the context through the HTTP API (start and wait in one request); the kernel through "
        "jupyter_client's blocking client, execute until `idle`",
    )


def _kernel_round_trip(kernel: Any) -> float:
    """One `execute("print(1)")`: the seconds until the kernel has printed `1` and is `idle`
    (its output may come in more than one stream message)."""
    start = time.perf_counter()
    msg_id = kernel.execute("print(1)")
    text, idle = "", False
    while not (text == "1\n" and idle):
        message = kernel.get_iopub_msg(timeout=30)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream" and content.get("name") == "stdout":
            text += content.get("text", "")
        elif kind == "error":
            raise RuntimeError(f"the kernel: {content.get('ename')}: {content.get('evalue')}")
        elif kind == "status" and content.get("execution_state") == "idle":
            idle = True
    elapsed = time.perf_counter() - start
    kernel.get_shell_msg(timeout=30)  # its execute_reply, out of the measure
    return elapsed
