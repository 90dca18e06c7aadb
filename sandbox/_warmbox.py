"""Claiming a pre-started *sandboxed* leader: giving it one execution's files and stdio.

A pre-started sandbox (bubblewrap, `sandbox._bwrap`) was made with everything its kind of
start shares: the read-only root, the hidden paths, the session's workspace bound, its
namespaces, user, limits and cgroup. What a cold start of the execution would have had in
addition is bound in here, by the shim (root), into the sandbox's mount namespace: its own
files (the code file read-only, the progress file read-write), at their own paths, with
bubblewrap's flags (``nosuid,nodev``, ``ro`` for a read-only one), after the directories
that lead to them (mode 0755, as `sandboxed_argv` makes them), in bubblewrap's order
(`bind_order`: the workspace, then the files). The tree runs as an unprivileged user that
cannot open the execution's spool files, so its stdio is opened here, with the flags a cold
launch uses, and passed with the claim over the leader's stdin, a Unix socket
(``SCM_RIGHTS``).

Only where a bind shows no mount propagation (no ``shared:``/``master:`` field in
mountinfo): a bind made by bubblewrap of a shared mount is a slave of it, which a detached
clone (``open_tree``) cannot be made; such a claim is refused (the start is cold).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import resource
import signal
import socket
from collections.abc import Sequence

from . import _cgroups as cg
from ._errors import SpawnError
from ._linux import setns
from ._model import SpawnSpec
from ._tracking import Tracked

_libc = ctypes.CDLL(None, use_errno=True)

# The same numbers on every architecture (the syscall table is shared from 424 on).
_SYS_OPEN_TREE = 428
_SYS_MOVE_MOUNT = 429
_SYS_MOUNT_SETATTR = 442
_OPEN_TREE_CLONE = 1
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY = 0x1
_MOUNT_ATTR_NOSUID = 0x2
_MOUNT_ATTR_NODEV = 0x4
_CLONE_NEWNS = 0x00020000

#: The largest claim sent at once (the socket's buffer holds it: the shim never blocks on it).
MAX_CLAIM = 256 * 1024


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(result: int, what: str) -> int:
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _clone_file(path: str, readonly: bool) -> int:
    """A detached bind mount of the host file `path`, with bubblewrap's flags."""
    fd: int = _check(
        _libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, os.fsencode(path), _OPEN_TREE_CLONE | os.O_CLOEXEC),
        "open_tree",
    )
    try:
        attr = _MountAttr(
            _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV | (_MOUNT_ATTR_RDONLY if readonly else 0), 0, 0, 0
        )
        _check(
            _libc.syscall(
                _SYS_MOUNT_SETATTR, fd, b"", _AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)
            ),
            "mount_setattr",
        )
    except BaseException:
        os.close(fd)
        raise
    return fd


def propagates(path: str, leader: int) -> bool:
    """Whether the mount that holds `path` in the mount namespace of the sandbox's `leader`
    (which bubblewrap copied) has a propagation type other than private."""
    best, fields = "", False
    with open(f"/proc/{leader}/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split(" - ", 1)[0].split()
            point = parts[4].replace("\\040", " ")
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best):
                best, fields = point, len(parts) > 6
    return fields


def namespace_pid(procs: Sequence[int], leader: int) -> int:
    """A process of the tree (`procs`: its cgroup's) in another mount namespace than its
    `leader` (whose namespace is the shim's, or its keeper's): one inside the sandbox."""
    own = os.stat(f"/proc/{leader}/ns/mnt").st_ino
    for pid in procs:
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{pid}/ns/mnt").st_ino != own:
                return pid
    raise SpawnError("the pre-started sandbox has no process in its own mount namespace")


def give_files(pid: int, leader: int, binds: Sequence[tuple[str, bool]], same: Sequence[str]) -> None:
    """Bind each host file of `binds` (path, read-only) at its own path in the mount namespace
    of `pid` (see the module's description), once each path of `same` is checked to be the
    same file inside as on the host (the workspace the sandbox bound when it started).
    `leader`: the sandbox's leader, outside it.

    Raises:
        SpawnError: a check failed (nothing was changed), or a bind did (the tree must be
            discarded).
    """
    for path, _readonly in binds:
        if propagates(path, leader):
            raise SpawnError(
                f"{path} is on a mount with propagation: a sandbox's bind of it cannot be cloned"
            )
    root = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    trees: list[int] = []
    try:
        for path in same:
            outside, inside = os.stat(path), os.stat(path.lstrip("/"), dir_fd=root, follow_symlinks=False)
            if (outside.st_dev, outside.st_ino) != (inside.st_dev, inside.st_ino):
                raise SpawnError(f"{path} is no longer what the pre-started sandbox bound")
        for path, readonly in binds:
            trees.append(_clone_file(path, readonly))
            _mount_point(root, path.lstrip("/"))
        _move_into(pid, root, [(fd, path.lstrip("/")) for fd, (path, _ro) in zip(trees, binds, strict=True)])
    except OSError as e:
        raise SpawnError(f"cannot give the pre-started sandbox its files: {e}") from None
    finally:
        for fd in trees:
            os.close(fd)
        os.close(root)


def _mount_point(root: int, relative: str) -> None:
    """The directories leading to `relative` (0755) and an empty file to bind onto."""
    parts = relative.split("/")
    for i in range(1, len(parts)):
        directory = "/".join(parts[:i])
        try:
            os.mkdir(directory, 0o755, dir_fd=root)
            os.chmod(directory, 0o755, dir_fd=root)  # not the shim's umask
        except FileExistsError:
            pass
    fd = os.open(
        relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o444, dir_fd=root
    )
    os.close(fd)


def _move_into(pid: int, root: int, trees: list[tuple[int, str]]) -> None:
    """Attach the detached mounts in `pid`'s mount namespace (the shim enters it for the few
    system calls: it is single-threaded; its namespace, root and cwd are restored after)."""
    target = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    own = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        setns(target, _CLONE_NEWNS)
        try:
            for fd, relative in trees:
                _check(
                    _libc.syscall(
                        _SYS_MOVE_MOUNT, fd, b"", root, os.fsencode(relative), _MOVE_MOUNT_F_EMPTY_PATH
                    ),
                    "move_mount",
                )
        finally:
            try:
                setns(own, _CLONE_NEWNS)
                os.fchdir(cwd)
            except OSError as e:
                # In the sandbox's namespace the shim would see its hidden paths empty.
                raise SystemExit(f"shim: cannot return to its mount namespace: {e}") from None
    finally:
        for fd in (target, own, cwd):
            os.close(fd)


def open_stdio(stdin_path: str | None, stdout_path: str, stderr_path: str) -> list[int]:
    """The leader's stdio, opened as a cold launch opens it; raises OSError."""
    fds: list[int] = []
    try:
        fds.append(os.open(stdin_path or os.devnull, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        os.set_blocking(fds[0], True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        for path in (stdout_path, stderr_path):
            fds.append(os.open(path, flags, 0o600))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


#: The rlimits a leader is given (`sandbox._launch.make_plan`), by their resource names.
_LIMITED = ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_AS")


def leader_limits(leader: int) -> bytes:
    """The first line of a sandbox's claim: the rlimits its leader has (``WHICH:SOFT:HARD``).

    The shim sets them on the leader (the sandbox's ``sh``) right after its exec, which may
    already have forked bubblewrap by then: the interpreter, whose user the shim may not
    prlimit, lowers its own to these (`warmdriver`), as a cold start's would be.
    """
    fields = []
    for name in _LIMITED:
        which = getattr(resource, name)
        soft, hard = resource.prlimit(leader, which)
        fields.append(f"{which}:{soft}:{hard}")
    return ("rlimits " + " ".join(fields) + "\n").encode()


def ready(sock: socket.socket) -> bool:
    """Whether the pre-started sandbox on `sock` has finished starting: its driver sends one
    byte when it waits for its claim (anything before is start-up, whose output is checked)."""
    try:
        return sock.recv(1, socket.MSG_DONTWAIT) == b"r"
    except BlockingIOError:
        return False
    except OSError:
        return False


def send_claim(sock: socket.socket, data: bytes, fds: list[int]) -> None:
    """Send `data` with `fds`, then an end of file; never blocks (raises SpawnError if the
    socket's buffer cannot take it all at once)."""
    if len(data) > MAX_CLAIM:
        raise SpawnError(f"a claim of {len(data)} bytes is too large for a pre-started sandbox")
    try:
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_CLAIM * 2)
        sent = socket.send_fds(sock, [data], fds)
        if sent != len(data):
            raise SpawnError("the pre-started sandbox's socket did not take the whole claim")
        sock.shutdown(socket.SHUT_WR)
    except OSError as e:
        if e.errno in (errno.EPIPE, errno.ECONNRESET):
            raise SpawnError("the pre-started sandbox is gone") from None
        raise SpawnError(f"cannot send the claim: {e}") from None


def claim(
    tracked: Tracked,
    sock: socket.socket,
    spec: SpawnSpec,
    data: bytes,
    binds: Sequence[tuple[str, bool]],
    same: Sequence[str],
) -> None:
    """Give the pre-started sandbox `tracked` the execution's files (`give_files`), then its
    stdio and `data` over `sock`. Any failure kills the tree (it may have been given some of
    its files) and raises SpawnError; its client still holds it, to release it."""
    try:
        fds = open_stdio(spec.stdin_path, spec.stdout_path, spec.stderr_path)
    except OSError as e:
        raise SpawnError(f"cannot open the stdio of {spec.name!r}: {e.strerror}") from None
    try:
        if tracked.info.cgroup is None:
            raise SpawnError("a pre-started sandbox is claimed only in a cgroup (to find its processes)")
        leader = tracked.info.pid
        pid = namespace_pid(cg.procs(tracked.info.cgroup), leader)
        give_files(pid, leader, binds, same)
        try:
            limits = leader_limits(leader)
        except OSError as e:
            raise SpawnError(f"cannot read the rlimits of its leader: {e.strerror}") from None
        send_claim(sock, limits + data, fds)
    except SpawnError:
        tracked.signal(signal.SIGKILL)
        raise
    finally:
        for fd in fds:
            os.close(fd)
