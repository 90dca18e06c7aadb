"""Start one execution's leader, inside its containment from its first instruction.

The shim does not fork a copy of itself for this. Measured on a 2-core VM, a Python fork of
the ~16 MB shim takes ~0.5 ms before the child runs, and the exec that follows ~0.8 ms more
to tear the copied address space down: 2 ms per spawn, against 0.3 ms for subprocess, whose
C code uses vfork (no copy) and reports exec failures through a close-on-exec pipe. So the
leader is started by `subprocess.Popen`, and everything it cannot do in the child is done
around it by the (single-threaded) shim:

- cgroups: the shim joins the execution's cgroups for the instant of the spawn, so the child
  is born inside them (nothing can escape), then returns to its own. Their limits are written
  once the shim has left, so that it never counts against them nor can be OOM-killed there.
  It moves its one thread only where it can (`_cgroups.join_file`): moving a whole process
  waits for an RCU grace period of the kernel when the machine was idle (4-15 ms measured).
- pid namespace: unshare(CLONE_NEWPID) makes the shim's next child the init of a new namespace
  (a direct child of the shim, so its exact wait status comes back); setns() then puts the
  shim's later children back in its own namespace. Under ``cgroup``, setns() into the pid
  namespace of a keeper started beforehand (see `sandbox._keeper`) makes the leader its
  sibling in it instead.
- rlimits: prlimit() right after the exec, while the new program's loader is still mapping
  its libraries. RLIMIT_CORE=0 is the shim's own, inherited.
- session, cwd, stdio, exact environment, every other fd closed, default signal dispositions:
  Popen's start_new_session, cwd, close_fds and restore_signals (the shim ignores no signal
  but the two Python ignores, which restore_signals resets).

The shim waits for the exec (vfork), which takes well under a millisecond; only a cwd or an
executable on a hung network file system could make it wait longer.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from . import _procfs
from ._errors import SpawnError
from ._keeper import Keeper, joined, own_pid_namespace
from ._linux import CLONE_NEWPID, setns, unshare
from ._model import Containment, SpawnSpec


@dataclass(frozen=True)
class LaunchPlan:
    """What to start, and where it must be from the start."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin_path: str
    stdout_path: str
    stderr_path: str
    #: (the execution's cgroup dir, the shim's own dir there, the file a thread joins by)
    cgroups: list[tuple[str, str, str]]
    rlimits: list[tuple[int, int, int]]
    pidns: bool
    user: tuple[int, int] | None = None
    #: The leader's stdin (a pipe or a terminal the shim made), instead of `stdin_path`.
    stdin_fd: int | None = None
    #: The terminal that is also its stdout, stderr and controlling terminal.
    tty_fd: int | None = None


def make_plan(
    spec: SpawnSpec,
    containment: Containment,
    cgroups: list[tuple[str, str, str]],
    use_rlimit_as: bool,
    pidns: bool = False,
    stdin_fd: int | None = None,
    tty: bool = False,
) -> LaunchPlan:
    """The launch plan of `spec`.

    Args:
        spec: the spawn spec.
        containment: the concrete containment (PIDNS makes the leader a namespace's init).
        pidns: make the leader a namespace's init for another containment too.
        cgroups: (execution's cgroup, shim's own cgroup, join file) per hierarchy the leader
            must be born in.
        use_rlimit_as: cap the address space with RLIMIT_AS (when no memory cgroup does it).
    """
    env = dict(spec.env)
    if spec.tag is not None:
        env[spec.tag[0]] = spec.tag[1]
    limits = spec.limits
    rlimits = []
    if limits.max_open_files is not None:
        rlimits.append((resource.RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files))
    if limits.max_file_size_bytes is not None:
        size = limits.max_file_size_bytes
        rlimits.append((resource.RLIMIT_FSIZE, size, size))
    if limits.cpu_seconds is not None:
        # SIGXCPU at the soft limit; the hard limit, a second later, SIGKILLs one that ignores it.
        rlimits.append((resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1))
    if limits.max_processes is not None:
        # Per user, and not enforced for root: the pids cgroup is the real limit.
        rlimits.append((resource.RLIMIT_NPROC, limits.max_processes, limits.max_processes))
    if limits.memory_bytes is not None and use_rlimit_as:
        rlimits.append((resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes))
    return LaunchPlan(
        argv=list(spec.argv),
        env=env,
        cwd=spec.cwd,
        stdin_path=spec.stdin_path or os.devnull,
        stdout_path=spec.stdout_path,
        stderr_path=spec.stderr_path,
        cgroups=cgroups,
        rlimits=rlimits,
        pidns=pidns or containment is Containment.PIDNS,
        user=spec.user,
        stdin_fd=stdin_fd,
        tty_fd=stdin_fd if tty else None,
    )


def prepare_shim() -> None:
    """Set the shim's own state that its children inherit. Call once, before any launch.

    Dispositions inherited as ignored (from the daemon) would survive exec: reset them. Python's
    own SIGPIPE and SIGXFSZ ignores stay (the shim relies on them); restore_signals resets those
    in each child. No core dumps, for the shim or its children.
    """
    for sig in signal.valid_signals():
        if sig not in (signal.SIGPIPE, signal.SIGXFSZ) and signal.getsignal(sig) == signal.SIG_IGN:
            with contextlib.suppress(OSError, ValueError):
                signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def launch(plan: LaunchPlan, keeper: Keeper | None = None) -> tuple[int, int]:
    """Start the leader (in `keeper`'s pid namespace, if given); returns its (pid, start time)
    once it has exec'd.

    The caller reaps it (waitpid), and applies its rlimits (`apply_rlimits`) and its cgroups'
    limits at once.

    Raises:
        SpawnError: it could not start; nothing of it is left.
    """
    fds: list[int] = []
    argv = plan.argv
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND
        if plan.stdin_fd is None and plan.stdin_path == os.devnull:
            stdin = _devnull()
        elif plan.stdin_fd is None:
            # O_NONBLOCK: opening a FIFO without a writer must not hang the shim.
            fds.append(_open("stdin", plan.stdin_path, os.O_RDONLY | os.O_NONBLOCK))
            os.set_blocking(fds[0], True)
            stdin = fds[0]
        else:
            stdin = plan.stdin_fd
        if plan.tty_fd is None:
            fds.append(_open("stdout", plan.stdout_path, flags))
        # A terminal's output is copied to stdout by the shim; stderr stays an empty file.
        fds.append(_open("stderr", plan.stderr_path, flags))
        stdout = plan.tty_fd if plan.tty_fd is not None else fds[-2]
        stderr = plan.tty_fd if plan.tty_fd is not None else fds[-1]
        if plan.tty_fd is not None:
            # A new session whose controlling terminal is its stdin, made by setsid(1) in the
            # leader itself (it is not a group leader, so setsid(1) does not fork): Popen cannot
            # make a controlling terminal without a preexec_fn.
            argv = [_setsid(), "--ctty", *argv]
        namespace = joined(keeper) if keeper is not None else _new_pid_namespace(plan.pidns)
        # The namespaces last: inside the keeper's mount namespace, the shim has no /proc/self.
        with _inside(plan.cgroups), _inherited_soft_limits(plan.rlimits), namespace:
            process = _popen(plan, argv, stdin, stdout, stderr)
    finally:
        for fd in fds:
            os.close(fd)
    # The shim reaps its children itself (waitpid(-1)). Marked as reaped, Popen never calls
    # waitpid on this pid, which could steal the status of a later child that reuses it.
    process.returncode = 0
    started = _procfs.start_time(process.pid)
    if started is None:  # cannot happen: only the shim reaps, and it has not yet
        abort(process.pid)
        raise SpawnError(f"the leader {process.pid} vanished before it could be identified")
    return process.pid, started


def _popen(
    plan: LaunchPlan, argv: list[str], stdin: int, stdout: int, stderr: int
) -> subprocess.Popen[bytes]:
    """Popen the leader."""
    try:
        return subprocess.Popen(
            argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=plan.cwd,
            env=plan.env,
            start_new_session=plan.tty_fd is None,
            close_fds=True,
            restore_signals=True,
            # set*id in the (vfork) child, after its chdir: no preexec_fn needed.
            user=plan.user[0] if plan.user else None,
            group=plan.user[1] if plan.user else None,
            extra_groups=[] if plan.user else None,
        )
    except OSError as e:
        if e.filename == plan.cwd:  # subprocess's way of saying chdir failed
            raise SpawnError(f"cannot change directory to {plan.cwd!r}: {e.strerror}") from None
        raise SpawnError(f"{e.strerror}: {plan.argv[0]!r}") from None
    except (ValueError, subprocess.SubprocessError) as e:
        raise SpawnError(f"cannot start {plan.argv[0]!r}: {e}") from None


@functools.cache
def _devnull() -> int:
    """/dev/null for reading, opened once: most leaders' stdin (close-on-exec in the shim)."""
    return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)


@functools.cache
def _setsid() -> str:
    for directory in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        path = os.path.join(directory, "setsid")
        if os.access(path, os.X_OK):
            return path
    raise SpawnError("a terminal needs setsid(1) (util-linux), which this machine lacks")


def apply_rlimits(pid: int, rlimits: list[tuple[int, int, int]]) -> None:
    """Set the leader's rlimits (prlimit); raises OSError or ValueError.

    A limit above what this process may grant (its own hard limit, without the privilege to
    raise it) is lowered to that hard limit: a limit that cannot be raised is already tighter.
    """
    for which, soft, hard in rlimits:
        own_hard = resource.getrlimit(which)[1] if which in _CANNOT_RAISE else resource.RLIM_INFINITY
        if own_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, own_hard), min(hard, own_hard)
        try:
            resource.prlimit(pid, which, (soft, hard))
        except PermissionError:
            own_hard = resource.getrlimit(which)[1]
            if own_hard == resource.RLIM_INFINITY or (soft <= own_hard and hard <= own_hard):
                raise
            # Learnt once: the next spawns ask for no more than it may grant.
            _CANNOT_RAISE.add(which)
            resource.prlimit(pid, which, (min(soft, own_hard), min(hard, own_hard)))


#: The limits this process may not raise past its own hard limit (see `apply_rlimits`).
_CANNOT_RAISE: set[int] = set()


def abort(pid: int) -> None:
    """Kill and reap a leader that was started but must not be kept."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _open(what: str, path: str, flags: int) -> int:
    try:
        return os.open(path, flags | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise SpawnError(f"cannot open {what} {path!r}: {e.strerror}") from None


#: The limits a leader inherits from the shim's own soft limits at the fork, so that they hold
#: from its first instruction (prlimit after the exec then sets soft and hard). The others are
#: unsafe to lower in the shim even for an instant (its own CPU time, process count or address
#: space may already exceed them) and are applied right after the exec; they guard against
#: runaways, which take far longer than those microseconds.
_INHERITED = (resource.RLIMIT_NOFILE, resource.RLIMIT_FSIZE)


@contextlib.contextmanager
def _inherited_soft_limits(rlimits: list[tuple[int, int, int]]) -> Iterator[None]:
    saved: list[tuple[int, tuple[int, int]]] = []
    try:
        for which, soft, _hard in rlimits:
            if which not in _INHERITED:
                continue
            current = resource.getrlimit(which)
            if current[1] != resource.RLIM_INFINITY:
                soft = min(soft, current[1])
            if current[0] != resource.RLIM_INFINITY and soft >= current[0]:
                continue
            if which == resource.RLIMIT_NOFILE:
                # The shim must still open the fork's pipes: never below what it holds now
                # (looked up only when the limit is lowered: a listing of /proc/self/fd).
                soft = max(soft, _highest_fd() + 16)
                if current[0] != resource.RLIM_INFINITY and soft >= current[0]:
                    continue
            resource.setrlimit(which, (soft, current[1]))
            saved.append((which, current))
        yield
    finally:
        for which, current in reversed(saved):
            resource.setrlimit(which, current)


def _highest_fd() -> int:
    try:
        return max(int(fd) for fd in os.listdir("/proc/self/fd"))
    except (OSError, ValueError):
        return 1024


@contextlib.contextmanager
def _inside(cgroups: list[tuple[str, str, str]]) -> Iterator[None]:
    """The shim's thread sits in the execution's cgroups for the duration of the block."""
    joined: list[tuple[str, str]] = []
    try:
        for directory, home, how in cgroups:
            try:
                _join(directory, how)
            except OSError as e:
                raise SpawnError(f"cannot join the cgroup {directory}: {e.strerror}") from None
            joined.append((home, how))
        yield
    finally:
        for home, how in joined:
            try:
                _join(home, how, keep=True)
            except OSError as e:
                # Staying would put the shim under this execution's cgroup.kill: better exit
                # now (the trees live on, and a new shim can adopt them).
                raise SystemExit(f"shim: cannot return to its cgroup {home}: {e}") from None


def _join(directory: str, how: str, keep: bool = False) -> None:
    """Move the calling thread into the cgroup `directory` (through its file `how`); `keep`: its
    file stays open for the next time (the shim's own cgroups, joined again after every spawn)."""
    path = os.path.join(directory, how)
    fd = _KEPT.get(path) if keep else None
    if fd is None:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        if keep:
            _KEPT[path] = fd
    try:
        os.write(fd, b"0")
    finally:
        if not keep:
            os.close(fd)


#: The shim's own cgroup files it joins by, kept open (see `_join`).
_KEPT: dict[str, int] = {}


@contextlib.contextmanager
def _new_pid_namespace(wanted: bool) -> Iterator[None]:
    """The shim's children started in the block are born in a new pid namespace."""
    if not wanted:
        yield
        return
    own = own_pid_namespace()
    try:
        unshare(CLONE_NEWPID)
    except OSError as e:
        raise SpawnError(f"cannot create a pid namespace: {e.strerror}") from None
    try:
        yield
    finally:
        setns(own, CLONE_NEWPID)
