"""Spawn latency and throughput of the shim, against a plain fork+exec measured in the same run.

Not a test (pytest does not collect it): ``python tests/sandbox/bench_spawn.py [N]``.
Prints, per containment, the mean round trip of spawn + wait_exited of ``bash -c true``
compared with ``subprocess.run(["bash", "-c", "true"])``, and the spawn throughput of N
concurrent ``sleep 1`` from N trio tasks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from sandbox import Containment, SpawnSpec, Supervisor, detect, open_supervisor

PATH = "/usr/bin:/bin"
BASH = "/bin/bash"
PYTHON = os.path.realpath(sys.executable)


def spec(root: Path, name: str, argv: tuple[str, ...], containment: Containment) -> SpawnSpec:
    directory = root / name
    directory.mkdir()
    return SpawnSpec(
        name, argv, {"PATH": PATH}, str(directory), str(directory),
        str(directory / "stdout"), str(directory / "stderr"), containment=containment,
    )  # fmt: skip


def baseline(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run([BASH, "-c", "true"], check=True)
    return (time.perf_counter() - start) / n


async def latency(
    sup: Supervisor, root: Path, containment: Containment, n: int, run: str
) -> tuple[float, float]:
    """Mean (spawn round trip, spawn + wait_exited) of `bash -c true`."""
    specs = [spec(root, f"{run}-{containment}-{i}", (BASH, "-c", "true"), containment) for i in range(n)]
    spawning = 0.0
    start = time.perf_counter()
    for s in specs:
        before = time.perf_counter()
        await sup.spawn(s)
        spawning += time.perf_counter() - before
        await sup.wait_exited(s.name)
    elapsed = (time.perf_counter() - start) / n
    for s in specs:
        await sup.wait_empty(s.name)
        await sup.release(s.name)
    return spawning / n, elapsed


async def throughput(sup: Supervisor, root: Path, n: int) -> float:
    specs = [spec(root, f"many-{i}", ("sleep", "1"), Containment.AUTO) for i in range(n)]
    spawned = 0
    done = trio.Event()

    async def one(s: SpawnSpec) -> None:
        nonlocal spawned
        await sup.spawn(s)
        spawned += 1
        if spawned == n:
            done.set()
        await sup.wait_empty(s.name)
        await sup.release(s.name)

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for s in specs:
            nursery.start_soon(one, s)
        await done.wait()
        rate = n / (time.perf_counter() - start)
    return rate


async def main(n: int) -> None:
    caps = detect()
    print(f"machine: {caps.describe()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        async with open_supervisor(root / "run", python=PYTHON, idle_linger=0) as sup:
            for c in (Containment.CGROUP, Containment.PIDNS, Containment.PGROUP):
                await latency(sup, root, c, 20, "warm") if caps.available(c) else None
            base = baseline(200)
            print(f"subprocess.run(bash -c true): {base * 1e3:.2f} ms")
            for c in (Containment.CGROUP, Containment.PIDNS, Containment.PGROUP):
                if not caps.available(c):
                    print(f"{c}: unavailable ({caps.reasons.get(str(c))})")
                    continue
                spawn, mean = await latency(sup, root, c, 200, "measured")
                print(f"{c}: spawn {spawn * 1e3:.2f} ms; spawn+wait_exited {mean * 1e3:.2f} ms"
                      f" = baseline + {(mean - base) * 1e3:.2f} ms ({mean / base:.2f}x)")  # fmt: skip
            rate = await throughput(sup, root, n)
            print(f"throughput: {n} concurrent spawns from {n} tasks at {rate:.0f} spawns/s")
            await sup.shutdown()


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
