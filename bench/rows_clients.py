"""The clients: `events()` of the TypeScript client against the Python client's (row 13).

One execution prints 100,000 lines. Each client, in its own process (the timing is taken inside
it, past its start-up and imports), replays that execution's events through `events()` a few
times, then starts one like it and follows it live. The processes alternate TS, Python, TS, ...
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

from bench.context import Context
from bench.procs import ROOT, TOKEN, VENV_PYTHON
from bench.stats import median
from bench.table import Line

LINES = 100_000
COMMAND = f"seq -f 'line %.0f' 1 {LINES}"
TS_PACKAGE = ROOT / "clients" / "typescript"
TS_SCRIPT = ROOT / "bench" / "ts_events.mjs"
LINES_PER_S = "lines/s"
#: Replays of each process not counted: Node compiles the hot code of a client after a few.
WARMUP = 5


def _ts_ready() -> str:
    """The node binary, with the TypeScript client built (its build script installs what it needs)."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        raise RuntimeError("node (and npm) not found: the TypeScript client cannot be measured")
    built = TS_PACKAGE / "dist" / "index.js"
    sources = list((TS_PACKAGE / "src").rglob("*.ts"))
    if not built.exists() or any(s.stat().st_mtime > built.stat().st_mtime for s in sources):
        subprocess.run(["bash", str(TS_PACKAGE / "scripts" / "build.sh")], check=True, capture_output=True)
    return node


def _measure_python(execution_id: str, repeat: int, live_command: str) -> dict[str, Any]:
    """Row 13's Python side, in its own process: the same as bench/ts_events.mjs."""
    from workbench import Client

    def follow(client: Client, ref: Any) -> tuple[float, int, int]:
        """Seconds to follow `ref` to the end (lines are counted after the clock stops), lines, events."""
        start = time.perf_counter()
        deltas = [event.output_delta for event in client.events(ref)]
        seconds = time.perf_counter() - start
        return seconds, sum(d.count("\n") for d in deltas if d), len(deltas)

    replay: list[float] = []
    lines = events = 0
    with Client() as client:
        client.health()  # as the TypeScript side: the first request is not part of a figure
        for _ in range(repeat):
            seconds, lines, events = follow(client, execution_id)
            replay.append(seconds)
        start = time.perf_counter()
        run = client.run_bash(live_command, background=True)
        _, live_lines, _ = follow(client, run)
        live = time.perf_counter() - start
    return {"replay": replay, "lines": lines, "events": events, "live": live, "liveLines": live_lines}


async def _sample(ctx: Context, argv: list[str], url: str) -> dict[str, Any]:
    env = ctx.registry.env({"WORKBENCH_URL": url, "WORKBENCH_TOKEN": TOKEN})
    done = await trio.run_process(argv, env=env, capture_stdout=True, capture_stderr=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(argv[1]).name} failed: {done.stderr.decode(errors='replace')[-500:]}")
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    if result["lines"] != LINES or result["liveLines"] != LINES:
        raise RuntimeError(f"a client saw {result['lines']} / {result['liveLines']} of {LINES} lines")
    return result


async def row13_client_events(ctx: Context) -> list[Line]:
    node = _ts_ready()
    daemon = await ctx.main_daemon()
    record = await daemon.client.start(command=COMMAND, waitTimeoutMs=60_000)
    if record["status"] != "completed":
        raise RuntimeError(f"the printer ended {record['status']}")
    execution_id = record["executionId"]
    rounds, repeat = ctx.n(6, 2), ctx.n(20, 12)
    ts_argv = [node, str(TS_SCRIPT), execution_id, str(repeat), COMMAND]
    py_argv = [VENV_PYTHON, "-m", "bench.rows_clients", execution_id, str(repeat), COMMAND]
    ts: list[dict[str, Any]] = []
    py: list[dict[str, Any]] = []
    for _ in range(rounds):
        ts.append(await _sample(ctx, ts_argv, daemon.url))
        py.append(await _sample(ctx, py_argv, daemon.url))
    ts_replay = median([s for r in ts for s in r["replay"][WARMUP:]])
    py_replay = median([s for r in py for s in r["replay"][WARMUP:]])
    ts_live = median([r["live"] for r in ts])
    py_live = median([r["live"] for r in py])
    ratio = py_replay / ts_replay
    events = ts[0]["events"]
    return [
        Line(
            13,
            "TS events(), replay of 100k lines",
            LINES / ts_replay,
            unit=LINES_PER_S,
            baseline="Python client events()",
            baseline_value=LINES / py_replay,
            target="≥ 1×",
            met=ratio >= 1,
            samples=len(ts) * (repeat - WARMUP),
            note=(
                f"one execution of {LINES:,} lines ({events} events); each client in its own process, "
                f"timed inside it; the first {WARMUP} replays of each process are warm-ups"
            ),
        ),
        Line(
            13,
            "TS events(), live while it prints",
            LINES / ts_live,
            unit=LINES_PER_S,
            baseline="Python client events()",
            baseline_value=LINES / py_live,
            samples=len(ts),
            note="start in the background, then follow to the terminal event (the daemon's capture paces it)",
        ),
    ]


if __name__ == "__main__":
    print(json.dumps(_measure_python(sys.argv[1], int(sys.argv[2]), sys.argv[3])))
