"""Load: many jobs against task-spooler (row 3), 1 GB of output (4), 1,000 at once (9), recovery (11)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import trio

from bench.context import Context
from bench.procs import BASH, TOKEN, Daemon, tsp_binary
from bench.stats import alternate, median, timed_sync
from bench.table import MB, SECONDS, Line
from bench.wire import Client

JOBS = 500
SLOTS = 16  # the daemon's default WORKBENCH_MAX_CONCURRENT_EXECUTIONS


async def row3_many_jobs(ctx: Context) -> list[Line]:
    tsp = tsp_binary()
    figure = f"{JOBS} background `true`, submitted then all waited"
    baseline = f"task-spooler, the same {JOBS} jobs ({SLOTS} slots)"
    if tsp is None:
        return [
            Line(
                3,
                figure,
                unit=SECONDS,
                baseline=baseline,
                target="faster than tsp",
                error="task-spooler (tsp) is not installed and could not be installed",
            )
        ]
    daemon = await ctx.main_daemon()
    client = daemon.client
    rounds = ctx.n(5, 1)
    counter = 0
    submitted: list[float] = []

    async def workbench_jobs() -> float:
        start = time.perf_counter()
        ids = [(await client.start(command="true", background=True))["executionId"] for _ in range(JOBS)]
        submitted.append(time.perf_counter() - start)
        records = [await client.wait_terminal(i) for i in ids]
        elapsed = time.perf_counter() - start
        bad = [r["status"] for r in records if r["status"] != "completed"]
        if bad:
            raise RuntimeError(f"{len(bad)} of {JOBS} did not complete: {bad[:3]}")
        return elapsed

    batched: list[float] = []

    async def workbench_batch() -> float:
        # One request accepts the 500 (one transaction); the batch runs them 16 at once.
        items = [{"kind": "workbench_bash", "command": "true"}] * JOBS
        start = time.perf_counter()
        body = {"items": items, "concurrency": SLOTS, "background": True}
        answer = await client.request("POST", "/v1/executions/batch", body)
        batched.append(time.perf_counter() - start)
        record = await client.wait_terminal(answer.json()["executionId"])
        elapsed = time.perf_counter() - start
        if record["status"] != "completed":
            raise RuntimeError(f"the batch ended {record['status']}: {record.get('error')}")
        return elapsed

    def tsp_jobs() -> None:
        nonlocal counter
        counter += 1
        scratch = ctx.scratch(f"tsp-{counter}")
        sock = str(scratch / "socket")
        env = ctx.registry.env({"TS_SOCKET": sock, "TS_SLOTS": str(SLOTS), "TMPDIR": str(scratch)})
        ctx.registry.tsp_sockets.append((sock, env))
        ids = []
        for _ in range(JOBS):
            out = subprocess.run([tsp, "true"], env=env, capture_output=True, text=True, check=True)
            ids.append(out.stdout.strip())
        for job in ids:
            subprocess.run([tsp, "-w", job], env=env, capture_output=True, check=False)
        states = subprocess.run([tsp, "-l"], env=env, capture_output=True, text=True, check=True).stdout
        finished = sum(1 for line in states.splitlines()[1:] if " finished " in f" {line} ")
        subprocess.run([tsp, "-K"], env=env, capture_output=True, check=False)
        if finished != JOBS:
            raise RuntimeError(f"task-spooler finished {finished} of {JOBS} jobs")

    async with ctx.profiled(daemon, "row 3 500 background jobs"):
        ours, batch, theirs = await alternate(rounds, workbench_jobs, workbench_batch, timed_sync(tsp_jobs))
    ratio = median(ours) / median(theirs)
    batch_ratio = median(batch) / median(theirs)
    return [
        Line(
            3,
            figure,
            median(ours),
            unit=SECONDS,
            baseline=baseline,
            baseline_value=median(theirs),
            target="faster than tsp (ratio < 1)",
            met=ratio < 1,
            samples=rounds,
            note=f"sequential POSTs on one connection vs one `tsp` process per job; {SLOTS} at once in both; "
            f"the {JOBS} POSTs alone took {median(submitted):.2f} s",
        ),
        Line(
            3,
            f"a batch of {JOBS} `true` (concurrency {SLOTS}), accepted then all finished",
            median(batch),
            unit=SECONDS,
            baseline=baseline,
            baseline_value=median(theirs),
            target="ratio ≤ 0.5",
            met=batch_ratio <= 0.5,
            samples=rounds,
            note=f"one POST /v1/executions/batch (accepted in {median(batched) * 1000:.0f} ms, one "
            f"transaction), then one wait; the same {JOBS} jobs and {SLOTS} slots as task-spooler",
        ),
    ]


GIGABYTE = 1_000_000_000


async def row4_gigabyte(ctx: Context) -> list[Line]:
    daemon = await ctx.main_daemon()
    client = daemon.client
    command = f"head -c {GIGABYTE} /dev/zero"
    # The same, timing itself: the writer's own time, in µs on stderr (where it is slowed, not after).
    timing = f"s=$(date +%s%N); {command}; e=$(date +%s%N); echo $(( (e - s) / 1000 )) >&2"
    target_file = ctx.scratch("gigabyte") / "out.bin"
    rounds = ctx.n(4, 1)
    own: dict[str, list[float]] = {"daemon": [], "shell": []}

    async def captured(text: str) -> float:
        start = time.perf_counter()
        record = await client.start(command=text, waitTimeoutMs=600_000)
        elapsed = time.perf_counter() - start
        try:
            if record["status"] != "completed":
                raise RuntimeError(f"the 1 GB run ended {record['status']}: {record.get('error')}")
            sizes = {a["name"]: a["sizeBytes"] for a in record["artifacts"]}
            if sizes.get("stdout") != GIGABYTE:
                raise RuntimeError(f"the stdout artifact holds {sizes.get('stdout')} bytes, not {GIGABYTE}")
            if text is timing:
                path = f"/v1/executions/{record['executionId']}/artifacts/stderr"
                own["daemon"].append(int((await client.request("GET", path)).body) / 1e6)
        finally:
            await client.delete(record["executionId"])
        return elapsed

    def shell(text: str) -> None:
        done = subprocess.run([BASH, "-c", f"{{ {text}; }} > {target_file}"], check=True, capture_output=True)
        if text is timing:
            own["shell"].append(int(done.stderr) / 1e6)

    async def to_file(text: str) -> float:
        elapsed = await timed_sync(lambda: shell(text))()
        target_file.unlink()
        return elapsed

    async def ours_plain() -> float:
        return await captured(command)

    async def theirs_plain() -> float:
        return await to_file(command)

    async def ours_timed() -> float:
        return await captured(timing)

    async def theirs_timed() -> float:
        return await to_file(timing)

    async with ctx.profiled(daemon, "row 4 1 GB of stdout"):
        ours, theirs, _, _ = await alternate(rounds, ours_plain, theirs_plain, ours_timed, theirs_timed)
    ratio = median(ours) / median(theirs)
    return [
        Line(
            4,
            "1 GB of stdout captured (POST to terminal record)",
            median(ours),
            unit=SECONDS,
            baseline="the shell writing it to a file",
            baseline_value=median(theirs),
            target="ratio ≤ 1.25",
            met=ratio <= 1.25,
            samples=rounds,
            note=f"{GIGABYTE / median(ours) / 1e6:.0f} MB/s captured vs "
            f"{GIGABYTE / median(theirs) / 1e6:.0f} MB/s written",
        ),
        Line(
            4,
            "the same: `head`'s own time, in the execution",
            median(own["daemon"]),
            unit=SECONDS,
            baseline="`head`'s own time, writing to a file",
            baseline_value=median(own["shell"]),
            samples=rounds,
            note="the writer timing itself: how much of the cost is paid while it writes, not after",
        ),
    ]


CONCURRENT = 1000
RSS_LIMIT_MB = 250


def _shim_pid(daemon: Daemon) -> int | None:
    try:
        return int((daemon.data_dir / "run" / "shim.pid").read_text().strip())
    except (OSError, ValueError):
        return None


async def row9_thousand(ctx: Context) -> list[Line]:
    daemon = await ctx.start_daemon(
        "thousand",
        {
            "WORKBENCH_MAX_CONCURRENT_EXECUTIONS": str(CONCURRENT),
            "WORKBENCH_MAX_QUEUED_EXECUTIONS": str(CONCURRENT),
        },
    )
    try:
        return await _thousand(ctx, daemon)
    finally:
        await ctx.registry.stop_daemon(daemon)


async def _thousand(ctx: Context, daemon: Daemon) -> list[Line]:
    warm = Client("127.0.0.1", daemon.port, TOKEN)
    for _ in range(20):
        await warm.start(command="true")
    await warm.aclose()
    idle = daemon.rss()
    peak = {"daemon": idle, "shim": 0}
    sampling = True

    async def sample() -> None:
        shim = _shim_pid(daemon)
        while sampling:
            peak["daemon"] = max(peak["daemon"], daemon.rss())
            if shim is not None:
                try:
                    peak["shim"] = max(peak["shim"], int(psutil.Process(shim).memory_info().rss))
                except psutil.Error:
                    shim = _shim_pid(daemon)
            await trio.sleep(0.02)

    ids: list[str] = []
    records: list[dict[str, Any]] = []
    workers = 16
    start = time.perf_counter()

    async def submit(k: int) -> None:
        client = Client("127.0.0.1", daemon.port, TOKEN)
        try:
            for _ in range(k, CONCURRENT, workers):
                ids.append((await client.start(command="sleep 2", background=True))["executionId"])
        finally:
            await client.aclose()

    async def wait(k: int) -> None:
        client = Client("127.0.0.1", daemon.port, TOKEN)
        try:
            for i in range(k, len(ids), workers):
                records.append(await client.wait_terminal(ids[i]))
        finally:
            await client.aclose()

    async with ctx.profiled(daemon, "row 9 1000 concurrent sleep 2"), trio.open_nursery() as outer:
        outer.start_soon(sample)
        async with trio.open_nursery() as nursery:
            for k in range(workers):
                nursery.start_soon(submit, k)
        submitted = time.perf_counter() - start
        async with trio.open_nursery() as nursery:
            for k in range(workers):
                nursery.start_soon(wait, k)
        sampling = False
    elapsed = time.perf_counter() - start
    completed = sum(1 for r in records if r["status"] == "completed" and r["exitCode"] == 0)
    peak_mb, idle_mb = peak["daemon"] / 1e6, idle / 1e6
    all_done = completed == CONCURRENT
    return [
        Line(
            9,
            f"{CONCURRENT} concurrent `sleep 2`: daemon peak RSS",
            peak_mb,
            unit=MB,
            baseline="the same daemon idle, before",
            baseline_value=idle_mb,
            target=f"all complete; ≤ {RSS_LIMIT_MB} MB",
            met=all_done and peak_mb <= RSS_LIMIT_MB,
            note=f"{completed}/{CONCURRENT} completed; all submitted in {submitted:.1f} s, all done in "
            f"{elapsed:.1f} s; the shim (a process of its own) peaked at {peak['shim'] / 1e6:.0f} MB",
        ),
    ]


RECOVER = 200


async def row11_recovery(ctx: Context) -> list[Line]:
    rounds = ctx.n(5, 1)
    settings = {"WORKBENCH_MAX_CONCURRENT_EXECUTIONS": str(RECOVER + 16)}
    recovered: list[float] = []
    healthy: list[float] = []
    fresh: list[float] = []
    notes: list[str] = []
    for r in range(rounds):
        data_dir = ctx.root / "data" / f"recovery-{r}"
        first = await ctx.start_daemon(f"recovery-{r}", settings, data_dir=data_dir)
        second: Daemon | None = None
        try:
            await _start_sleepers(first)
            first.proc.kill()
            first.proc.wait()
            await first.client.aclose()
            start = time.perf_counter()
            second = ctx.registry.start_daemon(
                f"recovery-{r}-again", {"WORKBENCH_SHUTDOWN_MODE": "kill", **settings}, data_dir=data_dir
            )
            await second.wait_healthy(poll=0.002)
            healthy.append(time.perf_counter() - start)
            running, lost = await _count_adopted(second)
            recovered.append(time.perf_counter() - start)
            if running != RECOVER:
                notes.append(f"round {r + 1}: {running} of {RECOVER} running after restart, {lost} lost")
            # The baseline: a daemon's own start, on an empty data dir.
            start = time.perf_counter()
            empty = ctx.registry.start_daemon(f"recovery-{r}-fresh", {"WORKBENCH_SHUTDOWN_MODE": "kill"})
            try:
                await empty.wait_healthy(poll=0.002)
                fresh.append(time.perf_counter() - start)
            finally:
                await ctx.registry.stop_daemon(empty)
        finally:
            if second is not None:
                await ctx.registry.stop_daemon(second)
            else:
                await ctx.registry.stop_daemon(first)
        left = _alive_under(data_dir)
        if left:
            notes.append(f"round {r + 1}: {left} processes outlived the daemon's stop (killed)")
    value = median(recovered)
    return [
        Line(
            11,
            f"recovery after SIGKILL, {RECOVER} running: start → healthy, all adopted",
            value,
            unit=SECONDS,
            baseline="a fresh daemon's start → healthy",
            baseline_value=median(fresh),
            target="≤ 2 s",
            met=value <= 2 and not notes,
            samples=rounds,
            note="; ".join([f"/healthz answered after {median(healthy):.2f} s", *notes]),
        ),
    ]


async def _start_sleepers(daemon: Daemon) -> None:
    async def submit(k: int) -> None:
        client = Client("127.0.0.1", daemon.port, TOKEN)
        try:
            for _ in range(k, RECOVER, 8):
                await client.start(command="sleep 60", background=True)
        finally:
            await client.aclose()

    async with trio.open_nursery() as nursery:
        for k in range(8):
            nursery.start_soon(submit, k)
    with trio.fail_after(60):
        while len(await daemon.client.list_all("running")) < RECOVER:
            await trio.sleep(0.05)
    await trio.sleep(0.2)  # let the last spawns settle into their trees


async def _count_adopted(daemon: Daemon) -> tuple[int, int]:
    """(running, lost) once every execution is running or has ended; waits at most 10 s."""
    with trio.move_on_after(10):
        while True:
            records = await daemon.client.list_all()
            running = sum(1 for r in records if r["status"] == "running")
            ended = [r for r in records if r["status"] not in {"running", "queued"}]
            if running + len(ended) == RECOVER:
                lost = sum(1 for r in ended if (r.get("error") or {}).get("code") == "lost")
                return running, lost
            await trio.sleep(0.005)
    return running, 0


def _alive_under(data_dir: Path) -> int:
    prefix = str(data_dir)
    victims = []
    for proc in psutil.process_iter():
        try:
            cwd = proc.cwd()
        except (psutil.Error, OSError):
            continue
        if cwd.startswith(prefix):
            victims.append(proc)
    for proc in victims:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return len(victims)
