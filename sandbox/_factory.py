"""The keeper factory: a child of the shim that starts keepers ahead of need
(``python -m sandbox._factory FD SHIM_PID RUN_DIR``, started once by the shim).

Starting a keeper takes the shim the time of a vfork and an exec (most of a millisecond on a
busy machine), which would delay whatever the shim handles next, such as a leader's exit. So a
process forked from the shim once, at its start, makes them instead: on each request byte it
creates a pid namespace whose init is an idle ``sleep`` (SIGCHLD ignored in the factory, so the
keeper inherits that, and the kernel reaps the keepers themselves when they die) with a mount
namespace and a /proc of its own (`sandbox._keeper.programs`), and sends the shim a pidfd of it
and an fd of its pid namespace (SCM_RIGHTS) with its pid at once; the shim opens its mount
namespace when it takes it, long after its /proc was mounted (or waits, the rare time not).
The shim keeps a few ready, asks for one more each time it takes one, and starts one itself
when none is ready (or the factory is gone). The factory exits with the shim (the end of the
socket, or the shim's pidfd), and then kills the keepers it made that the shim has not taken:
a tree's keeper must outlive a shim, an unused one must not. Each request byte says whether
the shim took a keeper, and whether to make another; one the shim took just before it died,
unsaid, is told from the unused by the tree in its pid namespace.
"""

from __future__ import annotations

import array
import dataclasses
import os
import select
import signal
import socket
import struct
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from . import _procfs
from ._errors import SpawnError
from ._keeper import Keeper, Programs, mount_namespace, programs, settle
from ._linux import CLONE_NEWPID, setns, unshare

_PID = struct.Struct("q")
#: Keepers held ready (more while spawns wait for one: see `Shim` and `want`).
READY = 4
#: Keepers asked for and not yet received, at most (a request is one message of that many bytes).
MAX_PENDING = 64


class KeeperFactory:
    """The shim's side: the ready keepers, and the socket that brings more."""

    def __init__(self, run_dir: str, log: Callable[[str], None]) -> None:
        self.log = log
        self.programs = programs(run_dir)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-s",
                    "-m",
                    "sandbox._factory",
                    str(child.fileno()),
                    str(os.getpid()),
                    run_dir,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(child.fileno(),),
                start_new_session=True,
            )
        finally:
            child.close()
        process.returncode = 0  # reaped by the shim's waitpid(-1), never by Popen
        self.pid = process.pid
        parent.setblocking(False)
        self.sock: socket.socket | None = parent
        self.ready: deque[Keeper] = deque()
        #: Told the socket's fd when the factory is found gone, before the socket closes.
        self.on_gone: Callable[[int], None] = lambda _fd: None
        self.pending = 0
        self.owed = 0  # keepers taken that the factory was not yet told about
        self.taken = 0  # taken from `ready` since the last `replenish`
        self.ask(READY, taken=False)

    @property
    def fileno(self) -> int:
        """The socket to watch for readiness (-1 once closed)."""
        return self.sock.fileno() if self.sock is not None else -1

    def ask(self, count: int, *, taken: bool, acknowledge: bool = True, done: int = 0) -> None:
        """Ask for `count` more keepers, each replacing one taken from the ready ones if `taken`
        (`acknowledge`), and say that `done` more were taken without asking for others."""
        if not taken:
            count = min(count, READY - len(self.ready) - self.pending)
        count = max(min(count, MAX_PENDING - self.pending), 0)
        replacing = taken and acknowledge
        if self.sock is None or count + done + self.owed <= 0:
            return
        try:
            self.sock.send(b"a" * self.owed + (b"t" if replacing else b"k") * count + b"a" * done)
            self.pending += count
            self.owed = 0
        except BlockingIOError:
            # Its queue is full: the keepers wait; that some were taken is said with the next
            # request (or it would kill them, as unused, when it ends).
            self.owed += (count if replacing else 0) + done
        except OSError as e:
            self._gone(f"cannot ask for keepers: {e}")

    def want(self, count: int) -> None:
        """Make sure that `count` keepers are ready or asked for (spawns wait for them)."""
        self.ask(count - len(self.ready) - self.pending, taken=True, acknowledge=False)

    def take(self) -> Keeper | None:
        """A ready keeper (alive), or None; `replenish` asks for its replacement."""
        while self.ready:
            keeper = self.ready.popleft()
            self.taken += 1
            if _alive(keeper):
                try:
                    if self.programs.chained:
                        settle(keeper.pid, self.programs.mark)  # its /proc is mounted
                    mounts = mount_namespace(keeper.pid)
                except SpawnError:
                    keeper.discard()
                    continue
                if _alive(keeper):  # so `mounts` is its namespace (its pid was not reused)
                    return dataclasses.replace(keeper, mounts=mounts)
                if mounts is not None:
                    os.close(mounts)
            keeper.discard()
        return None

    def replenish(self, waiting: int = 0) -> None:
        """Ask for as many keepers as were taken, up to READY and the `waiting` spawns: after a
        spawn, so that the factory's work does not compete with it."""
        taken, self.taken = self.taken, 0
        more = min(taken, READY + waiting - len(self.ready) - self.pending)
        self.ask(more, taken=True, done=taken - max(more, 0))

    def receive(self) -> bool:
        """Take in what the factory sent; False once it is gone (then stop watching it)."""
        while self.sock is not None:
            try:
                data, ancillary, _flags, _addr = self.sock.recvmsg(_PID.size, socket.CMSG_SPACE(8))
            except BlockingIOError:
                if self.owed:
                    self.ask(0, taken=True)  # it has read its queue: say what was taken
                return True
            except OSError as e:
                self._gone(str(e))
                return False
            fds = array.array("i")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            if not data or len(fds) != 2:
                for fd in fds:
                    os.close(fd)
                self._gone("it exited" if not data else "it sent a malformed message")
                return False
            self.pending = max(0, self.pending - 1)
            (pid,) = _PID.unpack(data)
            namespace, pidfd = fds
            started = _procfs.start_time(pid)
            keeper = Keeper(pid, started or 0, namespace, pidfd)
            if started is None or not _alive(keeper):
                keeper.discard()
                self.ask(1, taken=True)  # the factory forgets it, and makes another
            else:
                self.ready.append(keeper)
        return False

    def close(self) -> None:
        """Stop the factory (it sees the socket end) and kill the keepers not handed out."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        while self.ready:
            self.ready.popleft().discard()

    def _gone(self, why: str) -> None:
        self.log(f"the keeper factory is gone ({why}): keepers are started by the shim")
        if self.sock is not None:
            self.on_gone(self.sock.fileno())
            self.sock.close()
            self.sock = None


def sweep_lone_keepers(run_dir: str) -> int:
    """Kill the keepers made for `run_dir` that are alone in their pid namespace (their trees
    ended while no shim held them); how many. One pass over /proc, at a shim's start."""
    members, keepers = _census(programs(run_dir).mark)
    killed = 0
    for pid, namespace in keepers:
        started = _procfs.start_time(pid)
        if members[namespace] == 1 and started is not None:
            killed += _procfs.signal_processes([(pid, started)], signal.SIGKILL)
    return killed


def _census(mark: bytes = b"") -> tuple[dict[str, int], list[tuple[int, str]]]:
    """One pass over /proc: how many live processes each pid namespace holds, and (with a
    `mark`) the live processes whose command line starts with it, with their namespace."""
    members: dict[str, int] = {}
    marked: list[tuple[int, str]] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        namespace = _procfs.pid_namespace(int(entry))
        stat = _procfs.read_stat(int(entry))
        if namespace is None or stat is None or not stat.alive:
            continue  # gone, or a zombie of an ended tree that nobody reaped yet: not a member
        members[namespace] = members.get(namespace, 0) + 1
        if not mark:
            continue
        if _procfs.cmdline_starts_with(int(entry), mark):
            marked.append((int(entry), namespace))
    return members, marked


def _alive(keeper: Keeper) -> bool:
    """Whether the keeper still runs (its pidfd is not readable)."""
    if keeper.pidfd is None:
        return True
    poller = select.poll()
    poller.register(keeper.pidfd, select.POLLIN)
    return not poller.poll(0)


def main() -> None:  # pragma: no cover - the factory process
    """``python -m sandbox._factory FD SHIM_PID RUN_DIR``."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.set_inheritable(False)  # not into the keepers
    shim = int(sys.argv[2])
    unused: deque[tuple[int, int]] = deque()  # (pid, pidfd) of the keepers made and not taken, oldest first
    # Only the shim's end (its socket closing, or its pidfd becoming readable) ends it, and
    # then always through the `finally` below: no signal may cut the killing of `unused` short.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    try:
        parent = os.pidfd_open(shim)
    except OSError:
        return
    try:
        if os.getppid() == shim:  # else it died before its pidfd was open
            _serve(sock, parent, programs(sys.argv[3]), unused)
    finally:
        # Not those with a tree in their namespace: the shim took them just before it died,
        # before the factory heard so (its request unsent, or unread).
        for pidfd in _alone(unused):
            _procfs.pidfd_signal(pidfd, signal.SIGKILL)


def _alone(keepers: deque[tuple[int, int]]) -> list[int]:
    """The pidfds of `keepers` that are the only live process of their pid namespace."""
    namespaces = {pid: _procfs.pid_namespace(pid) for pid, _ in keepers}
    members, _ = _census()
    return [fd for pid, fd in keepers if members.get(namespaces[pid] or "", 0) <= 1]


def _serve(
    sock: socket.socket, parent: int, chosen: Programs, unused: deque[tuple[int, int]]
) -> None:  # pragma: no cover - the factory process
    """The factory's loop: a keeper for each byte received, until the socket ends or the shim dies."""
    # Ignored, so that the keepers inherit it (their orphans are reaped at once), and the
    # factory's own dead children (keepers) are reaped by the kernel.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    stdio = [(os.POSIX_SPAWN_DUP2, null, n) for n in (0, 1)]
    while True:
        readable, _, _ = select.select([sock.fileno(), parent], [], [])
        if parent in readable:
            return
        requests = sock.recv(MAX_PENDING * 2)
        if not requests:
            return
        for request in requests:
            # t: one was taken, make another; a: one was taken; k: make one more.
            if request in b"ta" and unused:
                os.close(unused.popleft()[1])  # handed to a tree (or discarded by the shim)
            if request != ord("a"):
                _make_one(sock, chosen, own, stdio, unused)


def _make_one(
    sock: socket.socket, chosen: Programs, own: int, stdio: list[Any], unused: deque[tuple[int, int]]
) -> None:  # pragma: no cover - the factory process
    """One keeper, recorded in `unused` and sent to the shim once it idles."""
    unshare(CLONE_NEWPID)
    try:
        pid = os.posix_spawn(
            chosen.factory[0],
            chosen.factory,
            {},
            file_actions=stdio,
            setsid=True,
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP),
        )
    finally:
        setns(own, CLONE_NEWPID)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        os.kill(pid, signal.SIGKILL)  # not reaped (SIGCHLD ignored, but alive): still it
        raise
    unused.append((pid, pidfd))  # before anything else can fail: killed at the exit unless taken
    namespace = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    fds = array.array("i", [namespace, pidfd])
    try:
        sock.sendmsg([_PID.pack(pid)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
    finally:
        os.close(namespace)


if __name__ == "__main__":
    main()
