"""Keepers: the idle init of a cgroup tree's pid namespace, started ahead of the tree.

A tree under the ``cgroup`` containment is also put in a pid namespace of its own where the
machine allows it: membership of a cgroup is lost by writing one's pid into another
cgroup.procs (root may write any), membership of a pid namespace never. Its init is a *keeper*,
an idle ``sleep`` started with SIGCHLD ignored, so that the kernel reaps at once the orphans
it inherits (a zombie would hold a pid, counted by the pids limit). The leader is forked into
that namespace beside it, as the shim's own child: its exact wait status comes back, and the
signals the kernel sends it (SIGXCPU, SIGPIPE) or it sends itself (``kill $$``) act as on any
process, which they would not on an init. SIGKILL to the keeper, from the shim's (parent)
namespace, kills every process of the namespace, and the kernel frees them all before the
keeper can be reaped: reaping it proves the tree is gone.

Keepers are started ahead by the keeper factory (`sandbox._factory`), so that a spawn only joins
a namespace (setns), which costs microseconds, and the shim never waits for one more process to
exec; `start_keeper` makes one in the shim itself when none is ready.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from . import _procfs
from ._errors import SpawnError
from ._linux import CLONE_NEWPID, setns, unshare


@dataclass(frozen=True)
class Keeper:
    """A started keeper: its (pid, start time) identity, an fd on its pid namespace, and a pidfd
    where it is not the shim's child (one the factory made)."""

    pid: int
    start_time: int
    namespace: int
    pidfd: int | None = None

    @property
    def identity(self) -> tuple[int, int]:
        """(pid, start time)."""
        return self.pid, self.start_time

    def discard(self) -> None:
        """Close its fds; kill (and reap, if the shim's child) the keeper never handed to a tree."""
        os.close(self.namespace)
        self.kill()

    def kill(self) -> None:
        """Kill it (and reap it, if the shim's child); closes its pidfd."""
        if self.pidfd is not None:
            _procfs.pidfd_signal(self.pidfd, signal.SIGKILL)  # the factory's child: reaped there
            os.close(self.pidfd)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def start_keeper() -> Keeper:
    """Start a keeper in a new pid namespace (the shim's own is restored after).

    Raises:
        SpawnError: it could not start.
    """
    argv = keeper_argv()
    own = own_pid_namespace()
    try:
        unshare(CLONE_NEWPID)
    except OSError as e:
        raise SpawnError(f"cannot create a pid namespace: {e.strerror}") from None
    try:
        keeper = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env={},
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise SpawnError(f"cannot start a keeper {argv[0]!r}: {e}") from None
    finally:
        setns(own, CLONE_NEWPID)
    keeper.returncode = 0  # reaped by the shim's waitpid(-1), never by Popen
    started = _procfs.start_time(keeper.pid)
    try:
        if started is None:  # cannot happen: only the shim reaps
            raise OSError(f"the keeper {keeper.pid} vanished before it could be identified")
        namespace = os.open(f"/proc/{keeper.pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        with contextlib.suppress(ProcessLookupError):
            os.kill(keeper.pid, signal.SIGKILL)
        raise SpawnError(f"cannot hold the keeper's pid namespace: {e}") from None
    return Keeper(keeper.pid, started, namespace)


@contextlib.contextmanager
def joined(keeper: Keeper) -> Iterator[None]:
    """The shim's children started in the block are born in `keeper`'s pid namespace."""
    try:
        setns(keeper.namespace, CLONE_NEWPID)
    except OSError as e:
        raise SpawnError(f"cannot join the keeper's pid namespace: {e.strerror}") from None
    try:
        yield
    finally:
        setns(own_pid_namespace(), CLONE_NEWPID)


@functools.cache
def own_pid_namespace() -> int:
    """An fd on the shim's own pid namespace."""
    return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)


#: The keeper where coreutils' env cannot ignore a signal for the program it runs (before 8.31).
_PYTHON_KEEPER = (
    "import signal\n"
    "for s in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
    "while True: signal.pause()"
)


@functools.cache
def keeper_argv() -> tuple[str, ...]:
    """An idle program whose SIGCHLD is ignored: ``env --ignore-signal=CHLD sleep``.

    Ignored dispositions survive exec, and sleep never changes them (some 0.5 MB of memory).
    Where env lacks the option (coreutils before 8.31), a Python one (some 8 MB).
    """
    env, sleep = _program("env"), _program("sleep")
    if env and sleep:
        try:
            probe = subprocess.run(
                [env, "--ignore-signal=CHLD", sleep, "0"], capture_output=True, timeout=10, check=False
            )
            if probe.returncode == 0:
                return (env, "--ignore-signal=CHLD", sleep, "2147483647")
        except (OSError, subprocess.SubprocessError):
            pass
    return (sys.executable, "-I", "-S", "-c", _PYTHON_KEEPER)


def keeper_program() -> tuple[str, ...]:
    """The factory's keeper: ``sleep`` alone (it inherits the factory's ignored SIGCHLD)."""
    sleep = _program("sleep")
    return (sleep, "2147483647") if sleep else keeper_argv()


def _program(name: str) -> str | None:
    for directory in ("/usr/bin", "/bin"):
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK):
            return path
    return None
