"""Start-to-finish latency: run+wait of `true` (rows 1, 8, 12), the CLI (2), code and images (10)."""

from __future__ import annotations

import contextlib
import datetime
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from bench.context import Context
from bench.procs import (
    BASH,
    TOKEN,
    VENV_PYTHON,
    WORKBENCH_CLI,
    Daemon,
    interpreter_on_path,
    on_tmpfs,
)
from bench.stats import Measure, alternate, median, percentile, timed_sync
from bench.table import Line
from bench.wire import Client, HttpError


def run_wait(
    client: Client,
    kind: str = "workbench_bash",
    records: list[tuple[float, dict[str, Any]]] | None = None,
    **spec: Any,
) -> Measure:
    """A measure: POST foreground, until the terminal record is back; it must have completed."""

    async def measure() -> float:
        start = time.perf_counter()
        record = await client.start(kind, **spec)
        elapsed = time.perf_counter() - start
        if record["status"] != "completed":
            raise RuntimeError(f"{kind} {spec}: ended {record['status']}: {record.get('error')}")
        if records is not None:
            records.append((elapsed, record))
        return elapsed

    return measure


def bash_true() -> Measure:
    return timed_sync(lambda: subprocess.run([BASH, "-c", "true"], check=True))


def durable_floor(db: sqlite3.Connection) -> Measure:
    """What the promises alone cost a run+wait, in one process with no HTTP, shim or containment:
    a row committed (WAL, `synchronous = FULL`: an fsync), `bash -c true` run, the row's status
    committed again. `db` is opened in autocommit mode (`isolation_level=None`)."""
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, status TEXT, spec BLOB)")

    def one() -> None:
        row = db.execute("INSERT INTO runs (status, spec) VALUES ('queued', randomblob(300))").lastrowid
        subprocess.run([BASH, "-c", "true"], check=True)
        db.execute("UPDATE runs SET status = 'completed' WHERE id = ?", (row,))

    return timed_sync(one)


def ms(values: list[float], q: float) -> float:
    return percentile(values, q) * 1000


async def row1_run_wait(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    n = ctx.n(300, 100)
    records: list[tuple[float, dict[str, Any]]] = []
    # Beside the daemon's store: the same disk.
    floor_db = daemon.data_dir.parent / f"{daemon.data_dir.name}-floor.db"
    with contextlib.closing(sqlite3.connect(floor_db, isolation_level=None)) as db:
        async with ctx.profiled(daemon, "row 1 run+wait true"):
            figure, base, floor = await alternate(
                n,
                run_wait(daemon.client, records=records, command="true"),
                bash_true(),
                durable_floor(db),
                warmup=10,
            )
    for suffix in ("", "-wal", "-shm"):
        Path(f"{floor_db}{suffix}").unlink(missing_ok=True)
    p50 = ms(figure, 50) / ms(base, 50)
    return [
        Line(
            1,
            "run+wait `true`, p50",
            ms(figure, 50),
            baseline="subprocess.run(bash -c true), p50",
            baseline_value=ms(base, 50),
            target="ratio ≤ 2.5",
            met=p50 <= 2.5,
            samples=n,
            note=breakdown(records[-n:]),
        ),
        Line(
            1,
            "run+wait `true`, p99",
            ms(figure, 99),
            baseline="subprocess.run(bash -c true), p99",
            baseline_value=ms(base, 99),
            samples=n,
        ),
        Line(
            1,
            "two durable commits around `bash -c true`, p50",
            ms(floor, 50),
            baseline="subprocess.run(bash -c true), p50",
            baseline_value=ms(base, 50),
            samples=n,
            note="what the promises alone cost: one process, SQLite in WAL with synchronous = FULL "
            "on the daemon's disk, a row committed, `bash -c true`, its status committed; no HTTP, "
            "shim or containment",
        ),
    ]


def _stamp(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def breakdown(records: list[tuple[float, dict[str, Any]]]) -> str:
    """Where a run+wait's time goes, from the record's own times (ms resolution; medians)."""
    queued = [_stamp(r["startedAt"]) - _stamp(r["createdAt"]) for _, r in records]
    running = [_stamp(r["finishedAt"]) - _stamp(r["startedAt"]) for _, r in records]
    rest = [e * 1000 - (_stamp(r["finishedAt"]) - _stamp(r["createdAt"])) for e, r in records]
    return (
        f"p50 split by the record's times: created → started {median(queued):.0f} ms, started → "
        f"finished {median(running):.0f} ms, the rest (request, accept, response) {median(rest):.1f} ms"
    )


async def row2_cli(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    env = ctx.registry.env({"WORKBENCH_URL": daemon.url, "WORKBENCH_TOKEN": TOKEN})
    argv = [WORKBENCH_CLI, "run", "--", "true"]
    # No stdin: `run` feeds a piped one to the command, reading it to its end first.
    probe = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    if probe.returncode != 0:
        said = (probe.stderr.strip() or probe.stdout.strip()).splitlines()
        return [
            Line(
                2,
                "CLI `workbench run -- true`, p50",
                baseline="`python -c pass` as a process, p50",
                target="ratio ≤ 2.5",
                error="the CLI's `run` does not work yet (exit "
                f"{probe.returncode}: {said[-1] if said else 'no output'})",
            ),
        ]
    n = ctx.n(100, 20)

    def cli() -> None:
        done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"workbench run exited {done.returncode}: {done.stderr[-300:]!r}")

    figure, base = await alternate(
        n,
        timed_sync(cli),
        timed_sync(lambda: subprocess.run([VENV_PYTHON, "-c", "pass"], check=True)),
        warmup=3,
    )
    ratio = median(figure) / median(base)
    return [
        Line(
            2,
            "CLI `workbench run -- true`, p50",
            ms(figure, 50),
            baseline="`python -c pass` as a process, p50",
            baseline_value=ms(base, 50),
            target="ratio ≤ 2.5",
            met=ratio <= 2.5,
            samples=n,
            note=f"p99 {ms(figure, 99):.0f} ms vs {ms(base, 99):.0f} ms; the venv's interpreter, no shim",
        ),
    ]


async def row8_containment(ctx: Context) -> list[Line]:
    mechanisms = ["cgroup", "pidns", "pgroup"]
    daemons: dict[str, Daemon] = {}
    errors: dict[str, str] = {}
    try:
        for mechanism in mechanisms:
            try:
                daemons[mechanism] = await ctx.start_daemon(
                    f"containment-{mechanism}", {"WORKBENCH_CONTAINMENT": mechanism}
                )
            except Exception as exc:
                errors[mechanism] = str(exc).splitlines()[-1]
        n = ctx.n(150, 40)
        available = [m for m in mechanisms if m in daemons]
        samples = await alternate(
            n, *(run_wait(daemons[m].client, command="true") for m in available), warmup=5
        )
    finally:
        for daemon in daemons.values():
            await ctx.registry.stop_daemon(daemon)
    by_mechanism = dict(zip(available, samples, strict=True))
    lines: list[Line] = []
    cheapest = min(by_mechanism, key=lambda m: median(by_mechanism[m])) if by_mechanism else ""
    for mechanism in mechanisms:
        if mechanism in errors:
            lines.append(
                Line(8, f"run+wait `true`, {mechanism}, p50", error=f"unavailable: {errors[mechanism]}")
            )
            continue
        values = by_mechanism[mechanism]
        lines.append(
            Line(
                8,
                f"run+wait `true`, {mechanism}, p50",
                ms(values, 50),
                baseline=f"the cheapest ({cheapest}), p50",
                baseline_value=ms(by_mechanism[cheapest], 50),
                samples=n,
                note=""
                if mechanism != cheapest
                else "the sandbox layer alone is in the `shim` lines (no HTTP, no store)",
            )
        )
    lines.extend(await _shim_spawn(ctx, mechanisms))
    return lines


async def _shim_spawn(ctx: Context, mechanisms: list[str]) -> list[Line]:
    """The sandbox layer alone: spawn + exit of `bash -c true` through a shim, per mechanism."""
    import sandbox

    root = ctx.scratch("shim")
    caps = sandbox.detect()
    n = ctx.n(150, 40)
    counter = 0

    def spec(containment: sandbox.Containment) -> sandbox.SpawnSpec:
        nonlocal counter
        counter += 1
        directory = root / f"{containment}-{counter}"
        directory.mkdir()
        return sandbox.SpawnSpec(
            f"{containment}-{counter}",
            (BASH, "-c", "true"),
            {"PATH": "/usr/bin:/bin"},
            str(directory),
            str(directory),
            str(directory / "stdout"),
            str(directory / "stderr"),
            containment=containment,
        )

    lines: list[Line] = []
    async with sandbox.open_supervisor(root / "run", python=VENV_PYTHON, idle_linger=0) as sup:
        usable = [sandbox.Containment(m) for m in mechanisms if caps.available(sandbox.Containment(m))]

        def spawn_wait(containment: sandbox.Containment) -> Measure:
            async def measure() -> float:
                s = spec(containment)
                start = time.perf_counter()
                await sup.spawn(s)
                await sup.wait_exited(s.name)
                elapsed = time.perf_counter() - start
                await sup.wait_empty(s.name)
                await sup.release(s.name)
                return elapsed

            return measure

        samples = await alternate(n, bash_true(), *(spawn_wait(c) for c in usable), warmup=5)
        await sup.shutdown()
    base = samples[0]
    for containment, values in zip(usable, samples[1:], strict=True):
        lines.append(
            Line(
                8,
                f"shim spawn+exit `bash -c true`, {containment}, p50",
                ms(values, 50),
                baseline="subprocess.run(bash -c true), p50",
                baseline_value=ms(base, 50),
                samples=n,
            )
        )
    return lines


async def row10_code(ctx: Context) -> list[Line]:
    """Cold starts on a daemon without a warm pool; the warm start on the main one (pool on)."""
    daemon = await ctx.main_daemon()
    images = {i["name"]: i for i in (await daemon.client.request("GET", "/v1/images")).json()["images"]}
    from workbench.core.images import EXECUTION_PATH

    python = interpreter_on_path("python3", EXECUTION_PATH)
    if python is None:
        return [Line(10, "`workbench_code` python `pass`", error="no python3 on the executions' PATH")]
    cold = await ctx.start_daemon("code-cold", {"WORKBENCH_WARM_POOL": "0"})
    try:
        return await _row10_measure(ctx, daemon.client, cold.client, images, python)
    finally:
        await ctx.registry.stop_daemon(cold)


async def _row10_measure(
    ctx: Context, warm: Client, client: Client, images: dict[str, Any], python: str
) -> list[Line]:
    n = ctx.n(150, 30)
    names: list[str] = []
    measures: list[Measure] = []

    def usable(image: str, language: str | None) -> str | None:
        info = images.get(image)
        if info is None:
            return f"the daemon has no `{image}` image"
        if not info["available"]:
            return f"the `{image}` image is unavailable: {info['unavailableReason']}"
        if language is not None and language not in info["languages"]:
            return f"the `{image}` image has no {language}"
        return None

    errors: dict[str, str] = {}
    for name, image, kind, spec in (
        ("code-host", "host", "workbench_code", {"language": "python", "code": "pass"}),
        ("code-warm", "host", "workbench_code", {"language": "python", "code": "pass"}),
        ("code-sandbox", "sandbox", "workbench_code", {"language": "python", "code": "pass"}),
        ("code-sandbox-warm", "sandbox", "workbench_code", {"language": "python", "code": "pass"}),
        ("true-host", "host", "workbench_bash", {"command": "true"}),
        ("true-sandbox", "sandbox", "workbench_bash", {"command": "true"}),
    ):
        reason = usable(image, spec.get("language"))
        if reason is None:
            on = warm if name.endswith("-warm") else client
            measure = run_wait(on, kind, None, image=image, **spec)
            try:
                await measure()
            except (HttpError, RuntimeError) as exc:
                reason = str(exc)
        if reason is not None:
            errors[name] = reason
            continue
        names.append(name)
        measures.append(measure)
    names.append("python")
    measures.append(timed_sync(lambda: subprocess.run([python, "-c", "pass"], check=True)))
    samples = dict(zip(names, await alternate(n, *measures, warmup=3), strict=True))
    base = samples["python"]
    lines: list[Line] = []
    for name, figure, target in (
        ("code-host", "`workbench_code` python `pass`, host, p50", 1.5),
        ("code-warm", "`workbench_code` python `pass`, host, warm start, p50", 1.0),
        ("code-sandbox", "`workbench_code` python `pass`, sandbox, p50", 1.5),
        ("code-sandbox-warm", "`workbench_code` python `pass`, sandbox, warm start, p50", 1.0),
    ):
        baseline = "`python3 -c pass` as a process, p50"
        if name in errors:
            lines.append(Line(10, figure, baseline=baseline, target=f"ratio ≤ {target}", error=errors[name]))
            continue
        ratio = median(samples[name]) / median(base)
        notes = {
            "code-host": f"the image's interpreter ({Path(python).name}) for both; no warm pool",
            "code-warm": "a pre-started interpreter claimed (WORKBENCH_WARM_POOL, default 2)",
            "code-sandbox-warm": "a pre-started sandbox of the session claimed",
        }
        lines.append(
            Line(
                10,
                figure,
                ms(samples[name], 50),
                baseline=baseline,
                baseline_value=ms(base, 50),
                target=f"ratio ≤ {target}",
                met=ratio <= target,
                samples=n,
                note=notes.get(name, ""),
            )
        )
    lines.append(_sandbox_warm_vs_cold(samples, errors, n))
    figure = "run+wait `true`, sandbox image, p50"
    if "true-sandbox" in errors or "true-host" in errors:
        lines.append(
            Line(
                10,
                figure,
                baseline="the same on host, p50",
                error=errors.get("true-sandbox") or errors["true-host"],
            )
        )
    else:
        lines.append(
            Line(
                10,
                figure,
                ms(samples["true-sandbox"], 50),
                baseline="the same on host, p50",
                baseline_value=ms(samples["true-host"], 50),
                samples=n,
            )
        )
    return lines


def _sandbox_warm_vs_cold(samples: dict[str, list[float]], errors: dict[str, str], n: int) -> Line:
    figure = "`workbench_code` python `pass`, sandbox, warm start vs cold, p50"
    baseline = "the same started cold (no warm pool), p50"
    error = errors.get("code-sandbox-warm") or errors.get("code-sandbox")
    if error is not None:
        return Line(10, figure, baseline=baseline, error=error)
    return Line(
        10,
        figure,
        ms(samples["code-sandbox-warm"], 50),
        baseline=baseline,
        baseline_value=ms(samples["code-sandbox"], 50),
        samples=n,
    )


def _fsync_cost(path: Path, rounds: int = 50) -> float:
    """Median ms of a 4 KiB append + fdatasync on the scratch dir's disk (what a commit waits for)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    times = []
    try:
        for _ in range(rounds):
            os.write(fd, b"x" * 4096)
            start = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
        path.unlink()
    return median(times) * 1000


async def row12_durability(ctx: Context) -> list[Line]:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not on_tmpfs(shm):
        return [Line(12, "run+wait `true`, data dir on disk, p50", error="no tmpfs at /dev/shm")]
    if on_tmpfs(ctx.root):
        return [Line(12, "run+wait `true`, data dir on disk, p50", error="the scratch dir is not on a disk")]
    memory_dir = Path(tempfile.mkdtemp(prefix="workbench-bench-", dir=shm))
    daemons: list[Daemon] = []
    try:
        disk = await ctx.start_daemon("durability-disk", {})
        daemons.append(disk)
        memory = await ctx.start_daemon("durability-tmpfs", {}, data_dir=memory_dir / "data")
        daemons.append(memory)
        n = ctx.n(200, 60)
        on_disk, in_memory = await alternate(
            n, run_wait(disk.client, command="true"), run_wait(memory.client, command="true"), warmup=10
        )
    finally:
        for daemon in daemons:
            await ctx.registry.stop_daemon(daemon)
        await trio.to_thread.run_sync(shutil.rmtree, memory_dir, True)
    fsync = await trio.to_thread.run_sync(_fsync_cost, ctx.scratch("fsync") / "probe")
    return [
        Line(
            12,
            "run+wait `true`, data dir on disk, p50",
            ms(on_disk, 50),
            baseline="the same on tmpfs (/dev/shm), p50",
            baseline_value=ms(in_memory, 50),
            samples=n,
            note=f"one 4 KiB write + fdatasync on this disk: {fsync:.2f} ms (median)",
        ),
        Line(
            12,
            "run+wait `true`, data dir on disk, p99",
            ms(on_disk, 99),
            baseline="the same on tmpfs (/dev/shm), p99",
            baseline_value=ms(in_memory, 99),
            samples=n,
        ),
    ]
