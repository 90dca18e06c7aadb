"""Fixtures for the sandbox tests: run dirs, specs, a supervisor, and a guard against leftovers.

Every test gets its own run dir and its own tag (an environment variable that every process
it starts carries). At teardown the guard kills any shim started under the run dir (a shim
lingering after its client left is by design, so that is not a failure) and any process that
still carries the tag, and fails the test if there was one: it should already have been dead.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from sandbox import (
    Capabilities,
    Containment,
    Limits,
    SpawnSpec,
    Supervisor,
    detect,
    open_supervisor,
)
from sandbox._cgroups import base_name, remove_tree
from sandbox._tree_cgroups import THREADED_SUFFIX

TAG_NAME = "SANDBOX_TEST_TAG"
PATH = "/usr/local/bin:/usr/bin:/bin"
PYTHON = os.path.realpath(sys.executable)
CONTAINMENTS = [Containment.CGROUP, Containment.PIDNS, Containment.PGROUP]

_capabilities: Capabilities | None = None


def capabilities() -> Capabilities:
    """This machine's capabilities, probed once per test session."""
    global _capabilities
    if _capabilities is None:
        _capabilities = detect()
    return _capabilities


@pytest.fixture(params=CONTAINMENTS, ids=str)
def containment(request: pytest.FixtureRequest) -> Containment:
    """Each containment in turn; those this machine lacks are skipped with detect()'s reason."""
    wanted: Containment = request.param
    caps = capabilities()
    if not caps.available(wanted):
        pytest.skip(f"{wanted} unavailable: {caps.reasons.get(str(wanted))}")
    return wanted


def _tagged(entry: bytes) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if entry in f.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found


def _wait_dead(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [], 10)
    finally:
        os.close(fd)


def _kill_shim(run_dir: Path) -> None:
    try:
        pid = int((run_dir / "shim.pid").read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"sandbox.shim" in cmdline and str(run_dir).encode() in cmdline:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait_dead(pid)


@dataclass
class Kit:
    """What a test needs to build specs for its run dir and tag."""

    root: Path
    run_dir: Path
    tag: tuple[str, str]
    python: str = PYTHON  # a real interpreter path, never a PATH shim

    @property
    def caps(self) -> Capabilities:
        """This machine's capabilities."""
        return capabilities()

    def spec(
        self,
        name: str,
        argv: Sequence[str],
        containment: Containment = Containment.AUTO,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        stdin_path: Path | None = None,
        limits: Limits | None = None,
    ) -> SpawnSpec:
        """A spec whose directory (and output files) are root/<name>/."""
        directory = self.root / name
        directory.mkdir(exist_ok=True)
        return SpawnSpec(
            name=name,
            argv=tuple(argv),
            env={"PATH": PATH} if env is None else env,
            cwd=str(cwd or directory),
            dir=str(directory),
            stdout_path=str(directory / "stdout"),
            stderr_path=str(directory / "stderr"),
            stdin_path=str(stdin_path) if stdin_path else None,
            limits=limits or Limits(),
            containment=containment,
            tag=self.tag,
        )

    def out(self, name: str, stream: str = "stdout") -> str:
        """What execution `name` wrote to `stream` so far."""
        return (self.root / name / stream).read_text()

    def tagged(self) -> list[int]:
        """The live processes that carry this test's tag."""
        return [pid for pid in _tagged(f"{self.tag[0]}={self.tag[1]}".encode()) if _alive(pid)]

    def shims(self) -> list[int]:
        """The live shim processes of this test's run dir."""
        found = []
        for name in os.listdir("/proc"):
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes() if name.isdigit() else b""
            except OSError:
                continue
            if b"sandbox.shim\0" + str(self.run_dir).encode() + b"\0" in cmdline and _alive(int(name)):
                found.append(int(name))
        return found

    @staticmethod
    def alive(pid: int) -> bool:
        """Whether `pid` exists and is not a zombie."""
        return _alive(pid)

    @staticmethod
    async def wait_until(predicate: Callable[[], bool], within_s: float = 10.0) -> None:
        """Wait until `predicate()` holds (at most `within_s`).

        A test-side poll: what it waits for is done by the processes under test, which offer
        nothing to wait on.
        """
        with trio.fail_after(within_s):
            while True:
                if predicate():
                    return
                await trio.sleep(0.01)

    @staticmethod
    async def wait_lines(path: Path, count: int) -> list[str]:
        """Wait until `path` has `count` lines (written by processes under test); returns them."""
        await Kit.wait_until(lambda: len(_lines(path)) >= count)
        return _lines(path)

    @staticmethod
    def exists(path: str) -> bool:
        """Whether `path` exists."""
        return os.path.exists(path)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    """A run dir and tag for the test; at teardown, the leftover guard (see the module doc)."""
    kit = Kit(root=tmp_path, run_dir=tmp_path / "run", tag=(TAG_NAME, uuid.uuid4().hex))
    yield kit
    _kill_shim(kit.run_dir)
    leftovers = kit.tagged()
    for pid in leftovers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in leftovers:
        _wait_dead(pid)
    caps = capabilities()
    for parent in (caps.v2_parent, caps.memory_parent, caps.pids_parent):
        if parent:
            remove_tree(os.path.join(parent, base_name(str(kit.run_dir))))
    if caps.v2_parent:
        remove_tree(os.path.join(caps.v2_parent, base_name(str(kit.run_dir)) + THREADED_SUFFIX))
    if leftovers:
        pytest.fail(f"processes left behind (killed now): {leftovers}")


@pytest.fixture
async def sup(kit: Kit) -> AsyncIterator[Supervisor]:
    """A supervisor on the test's run dir (its shim lingers 0.2 s once idle)."""
    async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=0.2) as supervisor:
        yield supervisor
