"""The bubblewrap (``bwrap``) command line of a sandboxed process tree, and a check that it works.

What the tree gets (`sandboxed_argv`):

- every capability dropped (``--cap-drop ALL``): run as root, bwrap without it lets the process
  remount ``/`` read-write. bwrap also sets no_new_privs, so a setuid or file-capability program
  regains nothing. With a `user` (bwrap run as root), the command runs as that unprivileged
  uid and gid instead, without supplementary groups: ``setpriv`` (util-linux), run by bwrap
  once the sandbox is made, sets them, empties the bounding and inheritable capability sets and
  execs the command (exit statuses pass through unchanged). Unlike root without capabilities,
  it owns none of the host's files it sees, and cannot write its read-only root's files even
  through a bind bwrap did not make read-only. ``/tmp`` is then world-writable (sticky);
- its own pid, ipc and uts namespaces, and its own network namespace holding only a loopback
  (bwrap brings ``lo`` up) unless the layout allows the network; ``--new-session`` (no TIOCSTI
  into a terminal); ``--die-with-parent``: the tree dies with bwrap;
- the host root bound read-only (with every mount below it), fresh ``/dev`` and ``/proc``, and
  ``/proc/sys`` read-only: as root, the process could otherwise write global sysctls such as
  ``kernel.core_pattern``, which runs a program of its choice on the host;
- empty private ``/tmp`` and ``/run`` (host sockets, such as a container engine's, live there);
  the layout's `hidden` paths replaced by empty ones (the daemon's data dir: its store, token
  and other executions); then its `readable` files bound read-only and its `writable` paths
  bound read-write at their own places (directories first: `bind_order`); it starts in `cwd`.

Exit status: bwrap reports a command killed by signal N as exit code 128+N, like a shell. So the
leader is a POSIX sh that runs bwrap and, for such a code, kills itself with signal N: the
signal is what gets recorded. The cost is one sh start (well under a millisecond). Where the
leader is the init of a pid namespace (the ``pidns`` containment) it cannot signal itself and
the code stays 128+N; a command that exits with 128+N by itself is reported as killed by N.

Signals from outside reach bwrap itself: a SIGTERM to the whole tree (a grace period) kills
bwrap, and with it, at once, everything inside. Killing is never weaker; a grace period is lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from ._model import Limits

#: Host directories replaced by empty private ones in every sandbox (where they exist).
PRIVATE_DIRS = ("/tmp", "/run")

#: Signals whose default action ends a process, the ones a leader can be "killed by" (raising
#: a stop, continue or ignored-by-default signal would not end the leader).
_FATAL_NAMES = (
    "SIGHUP SIGINT SIGQUIT SIGILL SIGTRAP SIGABRT SIGBUS SIGFPE SIGKILL SIGUSR1 SIGSEGV SIGUSR2 "
    "SIGPIPE SIGALRM SIGTERM SIGSTKFLT SIGXCPU SIGXFSZ SIGVTALRM SIGPROF SIGIO SIGPWR SIGSYS"
)
_FATAL = sorted(int(getattr(signal, name)) for name in _FATAL_NAMES.split() if hasattr(signal, name))

#: The leader: runs bwrap ($0 and its arguments), then turns an exit code 128+N back into death
#: by signal N. `exec` is not used: the status must be seen after bwrap ends.
_LEADER = (
    '"$0" "$@"; s=$?; case $s in '
    + "|".join(str(128 + n) for n in _FATAL)
    + ") kill -$((s - 128)) $$;; esac; exit $s"
)


@dataclass(frozen=True)
class Bubblewrap:
    """The programs a sandbox needs, as absolute paths: bwrap and a POSIX sh (the leader)."""

    bwrap: str
    sh: str
    #: util-linux's setpriv, to run the tree as an unprivileged user (None: not installed).
    setpriv: str | None = None
    #: util-linux's prlimit, to set the tree's rlimits before bwrap starts (None: not installed).
    prlimit: str | None = None

    def __post_init__(self) -> None:
        for what in ("bwrap", "sh"):
            _check_path(what, getattr(self, what))
        for what in ("setpriv", "prlimit"):
            if getattr(self, what) is not None:
                _check_path(what, getattr(self, what))


@dataclass(frozen=True)
class SandboxLayout:
    """What of the host one sandboxed tree sees, beyond the read-only host root.

    All paths are absolute and normalised. `hidden` paths (directories or files) look empty
    inside; `readable` files and `writable` paths (directories or files) are bound back in,
    after the hiding, so they may lie inside hidden directories; `cwd` is where it starts.
    `network`: share the host's network instead of a namespace with only a loopback.
    """

    cwd: str
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    network: bool = False

    def __post_init__(self) -> None:
        _check_path("cwd", self.cwd)
        for what in ("writable", "readable", "hidden"):
            paths = tuple(getattr(self, what))
            object.__setattr__(self, what, paths)
            for path in paths:
                _check_path(what, path)
                if path == "/":
                    raise ValueError(f"{what} cannot be the root directory")


def sandboxed_argv(
    tools: Bubblewrap,
    layout: SandboxLayout,
    argv: Sequence[str],
    user: tuple[int, int] | None = None,
    limits: Limits | None = None,
) -> tuple[str, ...]:
    """The command line that runs `argv` in the sandbox `layout` describes (see the module doc),
    as `user` (uid, gid; bwrap must then run as root, and `tools.setpriv` be known), with the
    rlimits of `limits` set by ``prlimit`` before bwrap starts: the shim sets them on the leader
    only after its exec, and the leader, a shell, starts bwrap at once, which would outrun them.

    The hidden paths must exist (a hidden path that is missing has nothing to hide and is left
    out); `readable` and `writable` ones must exist when the command line is run, and be
    accessible to `user`.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    if user is not None and (tools.setpriv is None or min(user) <= 0):
        raise ValueError(f"cannot run a sandbox as {user!r}: needs setpriv and an unprivileged uid and gid")
    args: list[str] = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--ro-bind", "/proc/sys", "/proc/sys"]
    for directory in PRIVATE_DIRS:
        if os.path.isdir(directory) and not os.path.islink(directory):
            if directory == "/tmp" and user is not None:
                args += ["--perms", "1777"]
            args += ["--tmpfs", directory]
    # Outer paths first, so that hiding a directory never undoes a hiding inside it.
    for path in sorted(layout.hidden, key=_depth):
        if os.path.isdir(path):
            args += ["--tmpfs", path]
        elif os.path.lexists(path):
            args += ["--ro-bind", os.devnull, path]
    if user is not None:
        args += _traversable_parents(layout)
    for path in bind_order(layout):
        args += ["--bind" if path in layout.writable else "--ro-bind", path, path]
    args += ["--chdir", layout.cwd]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not layout.network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session"]
    leader = (tools.sh, "-c", _LEADER, *_prlimit(tools, limits), tools.bwrap)
    if user is None:
        return (*leader, *args, "--cap-drop", "ALL", "--", *argv)
    assert tools.setpriv is not None
    uid, gid = user
    drop = (f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all")
    return (*leader, *args, "--", tools.setpriv, *drop, "--", *argv)


def _prlimit(tools: Bubblewrap, limits: Limits | None) -> tuple[str, ...]:
    """``prlimit`` and its options for the rlimits of `limits` (as `sandbox._launch` sets them:
    soft and hard alike, the CPU's hard one a second later); () for none (or no prlimit)."""
    if limits is None or tools.prlimit is None:
        return ()
    options = []
    for name, value in (
        ("nofile", limits.max_open_files),
        ("fsize", limits.max_file_size_bytes),
        ("nproc", limits.max_processes),
    ):
        if value is not None:
            options.append(f"--{name}={value}:{value}")
    if limits.cpu_seconds is not None:
        options.append(f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}")
    return (tools.prlimit, *options, "--") if options else ()


def bind_order(layout: SandboxLayout) -> list[str]:
    """The `readable` and `writable` paths in the order they are bound: directories, then
    files, each outer first. A path inside another is bound after it, and the binds of one
    execution's own files (code, progress) come after its session's workspace, so that a
    pre-started sandbox that bound the workspace can be given those files later in the same
    order (`sandbox._warmbox`)."""
    paths = [*layout.writable, *(p for p in layout.readable if p not in layout.writable)]
    return sorted(paths, key=lambda p: (not os.path.isdir(p), *_depth(p)))


def probe_bubblewrap(
    tools: Bubblewrap, argv: Sequence[str], *, network: bool = False, user: tuple[int, int] | None = None
) -> str | None:
    """Run `argv` once in an empty sandbox (as `user`): None if it exits 0, else why the sandbox
    is unusable.

    Catches what the mere presence of bwrap does not: a kernel or a container that refuses
    namespaces, or a program that cannot run inside. Blocks for the few milliseconds that takes.
    """
    command = sandboxed_argv(tools, SandboxLayout(cwd="/", network=network), argv, user)
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={"PATH": "/usr/bin:/bin"},
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot be run: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    detail = said[-1] if said else f"exit status {done.returncode}"
    return f"bubblewrap does not work here: {detail}"


def _traversable_parents(layout: SandboxLayout) -> list[str]:
    """Make the directories that lead to the bound paths inside hidden ones, mode 0755: those
    bwrap would make follow its umask (the daemon's, often 077), and the user could not pass.
    Outer ones first, in the order of the paths they lead to (`bind_order`)."""
    parents: dict[str, None] = {}
    for path in bind_order(layout):  # made in that order, as a pre-started sandbox's are
        chain = []
        parent = os.path.dirname(path)
        while parent != "/" and any(parent.startswith(h.rstrip("/") + "/") for h in layout.hidden):
            chain.append(parent)
            parent = os.path.dirname(parent)
        parents.update(dict.fromkeys(reversed(chain)))
    args: list[str] = []
    for parent in parents:
        args += ["--perms", "0755", "--dir", parent]
    return args


def _depth(path: str) -> tuple[int, str]:
    return path.rstrip("/").count("/"), path


def _check_path(what: str, path: str) -> None:
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        raise ValueError(f"{what}: {path!r} is not an absolute path")
    if os.path.normpath(path) != path:
        raise ValueError(f"{what}: {path!r} is not a normalised path")
