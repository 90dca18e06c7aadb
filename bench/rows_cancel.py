"""Cancel → terminal record (row 7), for `sleep 60` and a 50-process tree with escapees."""

from __future__ import annotations

import json
import os
import secrets
import signal
import time
from pathlib import Path

import psutil
import trio

from bench.context import Context
from bench.procs import BASH
from bench.stats import alternate, percentile
from bench.table import Line
from bench.wire import Client

#: 1 bash + 40 children + 5 `setsid` escapees + 4 double-forked orphans = 50 processes.
TREE = """\
for ((i = 0; i < 40; i++)); do sleep {marker} & done
for ((i = 0; i < 5; i++)); do setsid sleep {marker} & done
for ((i = 0; i < 4; i++)); do (sleep {marker} &); done
: > {ready}
wait
"""
TREE_SIZE = 50


def _marker() -> str:
    # A duration no other process uses: survivors are found by it.
    return f"60.{secrets.randbelow(10**9):09d}"


def _with_marker(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if marker in cmdline:
            found.append(proc)
    return found


def _kill_all(procs: list[psutil.Process]) -> None:
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=5)


async def _wait_file(path: Path) -> None:
    with trio.fail_after(30):
        while not path.exists():
            await trio.sleep(0.002)


async def _wait_running(client: Client, execution_id: str) -> None:
    with trio.fail_after(30):
        while (await client.get(execution_id))["status"] != "running":
            await trio.sleep(0.002)


async def row7_cancel(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    client = daemon.client
    scratch = ctx.scratch("cancel")
    counter = 0
    survivors = {"daemon": 0, "killpg": 0}

    async def cancel(command: str, ready: Path | None, marker: str) -> float:
        record = await client.start(command=command, background=True)
        execution_id = record["executionId"]
        await _wait_running(client, execution_id)
        if ready is not None:
            await _wait_file(ready)
        start = time.perf_counter()
        await client.cancel(execution_id)
        final = await client.wait_terminal(execution_id)
        elapsed = time.perf_counter() - start
        if final["status"] != "cancelled":
            said = {k: final.get(k) for k in ("error", "exitCode", "signal", "cancelReason", "containment")}
            raise RuntimeError(f"cancel ended it {final['status']}: {json.dumps(said)}")
        left = _with_marker(marker)
        survivors["daemon"] += len(left)
        _kill_all(left)
        return elapsed

    async def by_hand(command: str, ready: Path | None, marker: str) -> float:
        proc = ctx.registry.spawn([BASH, "-c", command], start_new_session=True, cwd=str(scratch))
        if ready is not None:
            await _wait_file(ready)
        else:
            await trio.sleep(0.005)  # let it exec
        start = time.perf_counter()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        elapsed = time.perf_counter() - start
        await trio.sleep(0.05)  # the group's members die after their leader is reaped: count escapees only
        left = _with_marker(marker)
        survivors["killpg"] += len(left)
        _kill_all(left)
        return elapsed

    def sleeper() -> tuple[str, None, str]:
        marker = _marker()
        return f"exec sleep {marker}", None, marker

    def tree() -> tuple[str, Path, str]:
        nonlocal counter
        counter += 1
        marker, ready = _marker(), scratch / f"ready-{counter}"
        return TREE.format(marker=marker, ready=ready), ready, marker

    async def cancel_sleep() -> float:
        return await cancel(*sleeper())

    async def kill_sleep() -> float:
        return await by_hand(*sleeper())

    async def cancel_tree() -> float:
        return await cancel(*tree())

    async def kill_tree() -> float:
        return await by_hand(*tree())

    n_sleep, n_tree = ctx.n(30, 8), ctx.n(15, 4)
    async with ctx.profiled(daemon, "row 7 cancel"):
        sleep_ours, sleep_base = await alternate(n_sleep, cancel_sleep, kill_sleep, warmup=2)
        tree_survivors_before = dict(survivors)
        tree_ours, tree_base = await alternate(n_tree, cancel_tree, kill_tree, warmup=1)
    escaped = (survivors["killpg"] - tree_survivors_before["killpg"]) / (n_tree + 1)
    leaked = survivors["daemon"]

    def ms(values: list[float], q: float) -> float:
        return percentile(values, q) * 1000

    tree_p50 = ms(tree_ours, 50)
    sleep_p50 = ms(sleep_ours, 50)
    return [
        Line(
            7,
            "cancel → terminal, `sleep 60`, p50",
            sleep_p50,
            baseline="killpg(SIGKILL) + wait by hand, p50",
            baseline_value=ms(sleep_base, 50),
            target="p50 ≤ 50 ms",
            met=sleep_p50 <= 50 and not leaked,
            samples=n_sleep,
        ),
        Line(
            7,
            "cancel → terminal, `sleep 60`, p99",
            ms(sleep_ours, 99),
            baseline="killpg(SIGKILL) + wait by hand, p99",
            baseline_value=ms(sleep_base, 99),
            samples=n_sleep,
        ),
        Line(
            7,
            f"cancel → terminal, {TREE_SIZE}-process tree with escapees, p50",
            tree_p50,
            baseline="killpg(SIGKILL) + wait by hand, p50",
            baseline_value=ms(tree_base, 50),
            target="p50 ≤ 50 ms",
            met=tree_p50 <= 50 and not leaked,
            samples=n_tree,
            note=(
                "no process of a cancelled tree survived"
                if not leaked
                else f"{leaked} processes survived a cancel!"
            )
            + f"; killpg by hand left {escaped:.0f} of {TREE_SIZE} alive each time (setsid, double fork)",
        ),
        Line(
            7,
            f"cancel → terminal, {TREE_SIZE}-process tree with escapees, p99",
            ms(tree_ours, 99),
            baseline="killpg(SIGKILL) + wait by hand, p99",
            baseline_value=ms(tree_base, 99),
            samples=n_tree,
        ),
    ]
