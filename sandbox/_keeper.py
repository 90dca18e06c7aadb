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

The keeper also has a mount namespace of its own (a slave of the shim's: later mounts of the
host still show) with a /proc of its pid namespace, which the leader joins too: inside the tree,
``$$``, ``/proc/$$``, ``ps``, ``pgrep`` and ``pkill`` all see the tree's own processes by the
numbers its own kill() understands, as in a container; its pid 1 shows as ``workbench-keeper``.
Where that mount is refused (`programs`), the keeper runs without it, and the tree sees the
host's /proc.

Keepers are started ahead by the keeper factory (`sandbox._factory`), so that a spawn only joins
two namespaces (setns), which costs microseconds, and the shim never waits for a process to
exec; `start_keeper` makes one in the shim itself when none comes in time.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from . import _procfs
from ._errors import SpawnError
from ._linux import CLONE_NEWNS, CLONE_NEWPID, setns, unshare


@dataclass(frozen=True)
class Keeper:
    """A started keeper: its (pid, start time) identity, an fd on its pid namespace, a pidfd
    where it is not the shim's child (one the factory made), and an fd on its mount namespace."""

    pid: int
    start_time: int
    namespace: int
    pidfd: int | None = None
    mounts: int | None = None

    @property
    def identity(self) -> tuple[int, int]:
        """(pid, start time)."""
        return self.pid, self.start_time

    def discard(self) -> None:
        """Close its fds; kill (and reap, if the shim's child) the keeper never handed to a tree."""
        self.close_namespaces()
        self.kill()

    def close_namespaces(self) -> None:
        """Close its namespace fds (once its leader has joined them)."""
        os.close(self.namespace)
        if self.mounts is not None:
            os.close(self.mounts)

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


def start_keeper(run_dir: str) -> Keeper:
    """Start a keeper in a new pid namespace (the shim's own is restored after).

    Raises:
        SpawnError: it could not start.
    """
    chosen = programs(run_dir)
    argv = chosen.shim
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
        if chosen.chained:
            settle(keeper.pid, chosen.mark)
        namespace = os.open(f"/proc/{keeper.pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, SpawnError) as e:
        with contextlib.suppress(ProcessLookupError):
            os.kill(keeper.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(keeper.pid, 0)
        raise SpawnError(f"cannot start a keeper: {e}") from None
    return Keeper(keeper.pid, started, namespace, mounts=mount_namespace(keeper.pid))


def mount_namespace(pid: int) -> int | None:
    """An fd on the mount namespace of `pid` if it is not the shim's own, else None."""
    try:
        if os.stat(f"/proc/{pid}/ns/mnt").st_ino == os.stat("/proc/self/ns/mnt").st_ino:
            return None
        return os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


@contextlib.contextmanager
def joined(keeper: Keeper) -> Iterator[None]:
    """The shim's children started in the block are born in `keeper`'s pid and mount namespaces.

    The shim itself sits in the keeper's mount namespace for the block (it has no threads, so it
    may), as it sits in an execution's cgroups for its spawn: its cwd is / before and after."""
    try:
        setns(keeper.namespace, CLONE_NEWPID)
    except OSError as e:
        raise SpawnError(f"cannot join the keeper's pid namespace: {e.strerror}") from None
    try:
        home = own_mount_namespace()  # opened before leaving it
        if keeper.mounts is not None:
            try:
                setns(keeper.mounts, CLONE_NEWNS)
            except OSError as e:
                raise SpawnError(f"cannot join the keeper's mount namespace: {e.strerror}") from None
        try:
            yield
        finally:
            if keeper.mounts is not None:
                try:
                    setns(home, CLONE_NEWNS)
                except OSError as e:
                    raise SystemExit(f"shim: cannot return to its mount namespace: {e}") from None
    finally:
        setns(own_pid_namespace(), CLONE_NEWPID)


@functools.cache
def own_pid_namespace() -> int:
    """An fd on the shim's own pid namespace."""
    return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)


@functools.cache
def own_mount_namespace() -> int:
    """An fd on the shim's own mount namespace."""
    return os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)


#: The keeper where coreutils' env cannot ignore a signal for the program it runs (before 8.31).
_PYTHON_KEEPER = (
    "import signal\n"
    "for s in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
    "while True: signal.pause()"
)
#: A keeper's name: a link to ``sleep`` in the run dir, so that ``ps`` in a tree shows its pid 1
#: as what it is, and a shim's sweep finds the keepers of its run dir.
KEEPER_NAME = "workbench-keeper"
_FOREVER = "2147483647"


@dataclass(frozen=True)
class Programs:
    """How the keepers of one run dir are started."""

    #: The factory's keeper (it inherits the factory's ignored SIGCHLD).
    factory: tuple[str, ...]
    #: The shim's own keeper, which ignores SIGCHLD itself (``env --ignore-signal``, or Python).
    shim: tuple[str, ...]
    #: How a keeper's /proc cmdline begins once it idles (the sweep's mark).
    mark: bytes
    #: Whether the exec chain makes the keeper's /proc (``unshare --mount-proc``): a starter then
    #: waits for the chain's last exec (`settle`) before a leader may join its namespaces.
    chained: bool


@functools.cache
def programs(run_dir: str) -> Programs:
    """The keeper programs of `run_dir` (makes its link to ``sleep``); probed once per process.

    ``unshare --mount --propagation slave --mount-proc`` gives the keeper its mount namespace
    (a slave of the shim's: the host's later mounts still show, its own stay there) and a /proc
    of its pid namespace, then ``env --ignore-signal=CHLD`` ignores SIGCHLD (unshare resets it;
    ignored dispositions survive exec, and sleep never changes them), and ``sleep`` idles in
    some 0.5 MB. Where env lacks the option (coreutils before 8.31), the shim's own keeper is a
    Python one (some 8 MB), and no keeper has a /proc of its own.
    """
    sleep, link = _program("sleep"), os.path.join(run_dir, KEEPER_NAME)
    python = (sys.executable, "-I", "-S", "-c", _PYTHON_KEEPER)
    if sleep is None or not _linked(link, sleep):
        return Programs(python, python, b"\0", chained=False)
    env = _program("env")
    if env is None or not _works([env, "--ignore-signal=CHLD", "true"]):
        return Programs((link, _FOREVER), python, f"{link}\0".encode(), chained=False)  # host's /proc
    proc = _mount_proc_prefix()
    if not proc:  # the factory's SIGCHLD, ignored, is inherited by sleep; the shim's is not
        return Programs(
            (link, _FOREVER), (env, "--ignore-signal=CHLD", link, _FOREVER), f"{link}\0".encode(), False
        )
    keeper = (*proc, env, "--ignore-signal=CHLD", link, _FOREVER)  # unshare resets SIGCHLD
    return Programs(keeper, keeper, f"{link}\0".encode(), chained=True)


def settle(pid: int, mark: bytes, ceiling_s: float = 10.0) -> None:
    """Wait until the keeper `pid` idles (its chain's last exec: its /proc is mounted).

    Raises:
        SpawnError: it died first, or did not get there in `ceiling_s`.
    """
    deadline = time.monotonic() + ceiling_s
    while True:
        if _procfs.cmdline_starts_with(pid, mark):
            return
        stat = _procfs.read_stat(pid)
        if stat is None or not stat.alive or time.monotonic() > deadline:
            raise SpawnError(f"the keeper {pid} did not start its idle program")
        time.sleep(0.0001)


def _mount_proc_prefix() -> tuple[str, ...]:
    """``unshare --mount --propagation slave --mount-proc`` where it works here, else ()."""
    unshare_program = _program("unshare")
    prefix = (unshare_program, "--mount", "--propagation", "slave", "--mount-proc") if unshare_program else ()
    return prefix if prefix and _works([*prefix, "true"]) else ()


def _linked(link: str, target: str) -> bool:
    """Whether `link` is (now) a symbolic link to `target`."""
    try:
        if os.readlink(link) == target:
            return True
    except OSError:
        pass
    temporary = f"{link}.{os.getpid()}"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        os.symlink(target, temporary)
        os.rename(temporary, link)
        return True
    except OSError:
        return False


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _program(name: str) -> str | None:
    for directory in ("/usr/bin", "/bin"):
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK):
            return path
    return None
