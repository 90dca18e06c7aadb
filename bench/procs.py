"""Processes the benchmarks start: interpreters, daemons, and the clean-up of everything left.

Every process a benchmark starts carries the run's marker in its environment (the daemon passes
it to its shim; executions get a scrubbed environment but run under the run's scratch directory),
so `Registry.cleanup` finds and kills them all, even after an interrupt or a daemon SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import trio

from bench.wire import Client

ROOT = Path(__file__).resolve().parent.parent
#: The venv's interpreter by its own path (a symlink to the real binary; the venv needs its path).
VENV_PYTHON = str(ROOT / ".venv" / "bin" / "python")
#: The interpreter's real binary: what `python3 -c pass` starts when no shim is in the way.
REAL_PYTHON = os.path.realpath(VENV_PYTHON)
WORKBENCH_CLI = str(ROOT / ".venv" / "bin" / "workbench")
BASH = shutil.which("bash") or "/bin/bash"
MARKER_ENV = "WB_BENCH_RUN"
TOKEN = "bench-" + secrets.token_hex(16)


def on_tmpfs(path: Path) -> bool:
    """True when `path` lives on a memory file system (tmpfs/ramfs)."""
    best, fstype = "", ""
    target = str(path.resolve())
    with open("/proc/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            parts = line.split()
            if len(parts) < 3:
                continue
            mountpoint = parts[1].replace("\\040", " ")
            inside = target == mountpoint or target.startswith(mountpoint.rstrip("/") + "/")
            if inside and len(mountpoint) >= len(best):
                best, fstype = mountpoint, parts[2]
    return fstype in {"tmpfs", "ramfs"}


def scratch_root() -> Path:
    """A fresh directory on a disk-backed file system (the temp dir, else bench/.work)."""
    base = Path(tempfile.gettempdir())
    if on_tmpfs(base):
        base = ROOT / "bench" / ".work"
        base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="workbench-bench-", dir=base))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _clean_env() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make every CLI run and daemon start compile the project's
    # modules again (about 11 ms of a CLI command): an installed Workbench has its bytecode.
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("WORKBENCH_") and k != "PYTHONDONTWRITEBYTECODE"
    }


@dataclass(eq=False)
class Daemon:
    """A `workbench serve` subprocess on its own port and data dir."""

    name: str
    proc: subprocess.Popen[bytes]
    port: int
    data_dir: Path
    log_path: Path
    env: dict[str, str]
    client: Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = Client("127.0.0.1", self.port, TOKEN)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def wait_healthy(self, timeout: float = 60.0, poll: float = 0.005) -> float:
        """Seconds from now until `GET /healthz` answers 200; raises if the daemon died or timed out."""
        start = time.perf_counter()
        probe = Client("127.0.0.1", self.port, TOKEN)
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"daemon {self.name} exited with {self.proc.returncode}:\n{self.log_tail()}"
                    )
                with contextlib.suppress(OSError, EOFError, trio.BrokenResourceError):
                    response = await probe.request("GET", "/healthz", check=False)
                    if response.status == 200:
                        return time.perf_counter() - start
                if time.perf_counter() - start > timeout:
                    raise RuntimeError(
                        f"daemon {self.name} not healthy after {timeout} s:\n{self.log_tail()}"
                    )
                await trio.sleep(poll)
        finally:
            await probe.aclose()

    def rss(self) -> int:
        return int(psutil.Process(self.pid).memory_info().rss)


class Registry:
    """Everything started in this run, and the scratch directory; `cleanup` ends it all."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.marker = secrets.token_hex(8)
        self.daemons: list[Daemon] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.tsp_sockets: list[tuple[str, dict[str, str]]] = []

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = _clean_env()
        env[MARKER_ENV] = self.marker
        env.update(extra or {})
        return env

    def spawn(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        """Popen with the run's marker; tracked for the clean-up."""
        env = kwargs.pop("env", None)
        kwargs.setdefault("start_new_session", True)
        proc: subprocess.Popen[bytes] = subprocess.Popen(
            argv,
            env=env if isinstance(env, dict) else self.env(),
            **kwargs,  # type: ignore[call-overload]
        )
        self.procs.append(proc)
        return proc

    def start_daemon(
        self, name: str, settings: dict[str, str] | None = None, data_dir: Path | None = None
    ) -> Daemon:
        """Start `python -m workbench serve` on a free port (not yet healthy: see `wait_healthy`)."""
        data = data_dir or self.root / "data" / name
        data.parent.mkdir(parents=True, exist_ok=True)
        logs = self.root / "logs"
        logs.mkdir(exist_ok=True)
        log_path = logs / f"{name}.log"
        port = free_port()
        env = self.env({"WORKBENCH_TOKEN": TOKEN, **(settings or {})})
        with open(log_path, "ab") as log:
            proc: subprocess.Popen[bytes] = subprocess.Popen(
                [
                    VENV_PYTHON,
                    "-m",
                    "workbench",
                    "serve",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--data-dir",
                    str(data),
                ],
                env=env,
                cwd=str(ROOT),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                # Its own session: a Ctrl-C in the terminal reaches the benchmark alone, which then
                # stops each daemon once (a second signal would make a daemon quit at once).
                start_new_session=True,
            )
        daemon = Daemon(name, proc, port, data, log_path, env)
        self.daemons.append(daemon)
        return daemon

    async def stop_daemon(self, daemon: Daemon, timeout: float = 15.0) -> None:
        """SIGTERM (running executions are killed: the daemons run with the `kill` shutdown mode)."""
        await daemon.client.aclose()
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
            with trio.move_on_after(timeout):
                while daemon.proc.poll() is None:
                    await trio.sleep(0.02)
            if daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.proc.wait()
        _kill_shim(daemon.data_dir)

    def cleanup(self, keep_files: bool = False) -> Counter[str]:
        """Stop every daemon, helper, shim and execution of this run; returns the leftovers killed."""
        for daemon in self.daemons:
            if daemon.proc.poll() is None:
                daemon.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for daemon in self.daemons:
            try:
                daemon.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                daemon.proc.kill()
                daemon.proc.wait()
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)
        for sock, env in self.tsp_sockets:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run([tsp_binary() or "tsp", "-K"], env=env, capture_output=True, timeout=5)
            Path(sock).unlink(missing_ok=True)
        for daemon in self.daemons:
            _kill_shim(daemon.data_dir)
        killed = sweep(self.root, self.marker)
        if not keep_files:
            shutil.rmtree(self.root, ignore_errors=True)
        return killed


def _kill_shim(data_dir: Path) -> None:
    pid_file = data_dir / "run" / "shim.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
        proc = psutil.Process(pid)
        if any(str(data_dir) in part for part in proc.cmdline()):
            proc.kill()


def sweep(root: Path, marker: str) -> Counter[str]:
    """SIGKILL every process of this run: marked environment, or cwd/command line in the scratch dir."""
    me = os.getpid()
    prefix = str(root)
    victims = []
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            mine = proc.environ().get(MARKER_ENV) == marker
            if not mine:
                cwd = proc.cwd()
                mine = cwd == prefix or cwd.startswith(prefix + "/")
            if not mine:
                mine = any(prefix in part for part in proc.cmdline())
        except (psutil.Error, OSError):
            continue
        if mine:
            victims.append(proc)
    names: Counter[str] = Counter()
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            names[proc.name()] += 1
            proc.kill()
    psutil.wait_procs(victims, timeout=5)
    return names


def tsp_binary() -> str | None:
    """task-spooler's binary (`tsp` on Debian, `ts` elsewhere; not moreutils' `ts`)."""
    for name in ("tsp", "ts"):
        path = shutil.which(name)
        if path is None:
            continue
        try:
            probe = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=5, env=_probe_env())
        except (OSError, subprocess.SubprocessError):
            continue
        if "spooler" in (probe.stdout + probe.stderr).lower():
            return path
    return None


def _probe_env() -> dict[str, str]:
    env = _clean_env()
    env["TS_SOCKET"] = os.path.join(tempfile.gettempdir(), f"bench-tsp-probe-{os.getpid()}")
    return env


def interpreter_on_path(name: str, path: str) -> str | None:
    """`name` looked up on `path` and resolved to its real binary, as the daemon's images do."""
    found = shutil.which(name, path=path)
    return os.path.realpath(found) if found else None


def describe_machine() -> dict[str, object]:
    uname = os.uname()
    return {
        "cores": os.cpu_count(),
        "kernel": f"{uname.sysname} {uname.release}",
        "python": sys.version.split()[0],
        "cpu": _cpu_model(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
    }


def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"
