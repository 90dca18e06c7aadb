"""What every row gets: the run's mode, its processes, the shared daemon, and the profiler hook."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import trio

from bench.procs import VENV_PYTHON, Daemon, Registry

PY_SPY = str(Path(VENV_PYTHON).parent / "py-spy")


@dataclass(eq=False)
class Context:
    quick: bool
    registry: Registry
    #: Profile the daemons with py-spy during the measured part of each row: "cpu" samples the
    #: thread holding the GIL; "wall" samples every thread, idle or not (where the waiting is).
    profile: str | None = None
    profiles: dict[str, str] = field(default_factory=dict)
    _main: Daemon | None = None

    @property
    def root(self) -> Path:
        return self.registry.root

    def n(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def scratch(self, name: str) -> Path:
        path = self.root / "scratch" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    async def main_daemon(self) -> Daemon:
        """The shared daemon (default settings, `kill` shutdown mode), started on first use."""
        if self._main is None or self._main.proc.poll() is not None:
            daemon = self.registry.start_daemon("main", {"WORKBENCH_SHUTDOWN_MODE": "kill"})
            self._main = daemon
            await daemon.wait_healthy()
        return self._main

    async def start_daemon(self, name: str, settings: dict[str, str], data_dir: Path | None = None) -> Daemon:
        daemon = self.registry.start_daemon(name, {"WORKBENCH_SHUTDOWN_MODE": "kill", **settings}, data_dir)
        await daemon.wait_healthy()
        return daemon

    @contextlib.asynccontextmanager
    async def profiled(self, daemon: Daemon, label: str) -> AsyncIterator[None]:
        """With `--profile`: py-spy samples `daemon` for the block; the top frames go to `profiles`."""
        if not self.profile or not os.path.exists(PY_SPY):
            yield
            return
        out = self.root / "profiles" / f"{label.replace(' ', '_')}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        spy = self.registry.spawn(
            [
                PY_SPY,
                "record",
                "--pid",
                str(daemon.pid),
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(out),
                *(["--gil"] if self.profile == "cpu" else ["--idle", "--threads"]),
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await trio.sleep(0.5)  # py-spy attaches
        try:
            yield
        finally:
            spy.send_signal(signal.SIGINT)
            with trio.move_on_after(20):
                while spy.poll() is None:
                    await trio.sleep(0.05)
            if spy.poll() is None:
                spy.kill()
            if not out.exists():
                self.profiles[label] = "py-spy wrote nothing"
            elif self.profile == "cpu":
                self.profiles[label] = summarize_profile(out)
            else:
                self.profiles[label] = summarize_threads(out)


_LINE = re.compile(r":\d+\)$")


def _stacks(path: Path) -> list[tuple[str, list[str], int]]:
    """(thread, frames outermost first, samples) of each line of a py-spy raw profile."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        parts = [p for p in stack.split(";") if p and not p.startswith("process ")]
        thread = parts.pop(0) if parts and parts[0].startswith("thread ") else "all"
        out.append((thread, [_LINE.sub(")", f) for f in parts], int(count_text)))
    return out


def summarize_profile(path: Path, top: int = 25) -> str:
    """Top frames of a py-spy raw (collapsed) profile: self time and inclusive time, in %."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for _thread, frames, count in _stacks(path):
        total += count
        if not frames:
            continue
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if total == 0:
        return "no samples"
    lines = [f"{total} samples of the thread holding the GIL", "self:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in own.most_common(top)]
    lines.append("inclusive:")
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in inclusive.most_common(top)]
    return "\n".join(lines)


def summarize_threads(path: Path, top: int = 8) -> str:
    """Per thread (busiest first): where its wall time goes, by innermost frame and by caller chain."""
    by_thread: dict[str, Counter[str]] = {}
    for thread, frames, count in _stacks(path):
        # The innermost frame with two callers: enough to tell a wait from work.
        key = " <- ".join(reversed(frames[-3:])) if frames else "?"
        by_thread.setdefault(thread, Counter())[key] += count
    lines = []
    for thread, counts in sorted(by_thread.items(), key=lambda kv: -sum(kv[1].values())):
        total = sum(counts.values())
        lines.append(f"{thread}: {total} samples")
        lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in counts.most_common(top)]
    return "\n".join(lines) or "no samples"
