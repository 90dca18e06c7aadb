"""The keeper factory: a child of the shim that starts keepers ahead of need
(``python -m sandbox._factory FD SHIM_PID RUN_DIR``, started once by the shim).

Starting a keeper takes the shim the time of a vfork and an exec (most of a millisecond on a
busy machine), which would delay whatever the shim handles next, such as a leader's exit. So a
process forked from the shim once, at its start, makes them instead: on each request byte it
creates a pid namespace whose init is an idle ``sleep`` (SIGCHLD ignored in the factory, so the
keeper inherits that, and the kernel reaps the keepers themselves when they die), and sends the
shim a pidfd of it and an fd of its namespace (SCM_RIGHTS) with its pid. The shim keeps a few
ready, asks for one more each time it takes one, and starts one itself when none is ready (or
the factory is gone). The factory exits with the shim (the end of the socket, or the shim's
pidfd), and then kills the keepers it made that the shim has not taken: a tree's keeper must
outlive a shim, an unused one must not. Each request byte says whether the shim took a keeper.
"""

from __future__ import annotations

import array
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
from ._keeper import Keeper, keeper_program
from ._linux import CLONE_NEWPID, setns, unshare

_PID = struct.Struct("q")
#: Keepers held ready: a burst of spawns beyond this starts the rest in the shim.
READY = 4


class KeeperFactory:
    """The shim's side: the ready keepers, and the socket that brings more."""

    def __init__(self, run_dir: str, log: Callable[[str], None]) -> None:
        self.log = log
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
        self.pending = 0
        self.taken = 0  # taken from `ready` since the last `replenish`
        self.ask(READY, taken=False)

    @property
    def fileno(self) -> int:
        """The socket to watch for readiness (-1 once closed)."""
        return self.sock.fileno() if self.sock is not None else -1

    def ask(self, count: int, *, taken: bool) -> None:
        """Ask for `count` more keepers, each replacing one taken from the ready ones if `taken`."""
        if not taken:
            count = min(count, READY - len(self.ready) - self.pending)
        if self.sock is None or count <= 0:
            return
        try:
            self.sock.send((b"t" if taken else b"k") * count)
            self.pending += count
        except OSError as e:
            self._gone(f"cannot ask for keepers: {e}")

    def take(self) -> Keeper | None:
        """A ready keeper (alive), or None; `replenish` asks for its replacement."""
        while self.ready:
            keeper = self.ready.popleft()
            self.taken += 1
            if _alive(keeper):
                return keeper
            keeper.discard()
        return None

    def replenish(self) -> None:
        """Ask for as many keepers as were taken: after a spawn, so that the factory's work does
        not compete with it."""
        taken, self.taken = self.taken, 0
        self.ask(taken, taken=True)

    def receive(self) -> bool:
        """Take in what the factory sent; False once it is gone (then stop watching it)."""
        while self.sock is not None:
            try:
                data, ancillary, _flags, _addr = self.sock.recvmsg(_PID.size, socket.CMSG_SPACE(8))
            except BlockingIOError:
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
            self.sock.close()
            self.sock = None


def sweep_lone_keepers(run_dir: str) -> int:
    """Kill the keepers made for `run_dir` that are alone in their pid namespace (their trees
    ended while no shim held them); how many. One pass over /proc, at a shim's start."""
    name = f"workbench-keeper {run_dir}\0".encode()
    members: dict[str, int] = {}
    keepers: list[tuple[int, str]] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        namespace = _procfs.pid_namespace(int(entry))
        stat = _procfs.read_stat(int(entry))
        if namespace is None or stat is None or not stat.alive:
            continue  # gone, or a zombie of an ended tree that nobody reaped yet: not a member
        members[namespace] = members.get(namespace, 0) + 1
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read(len(name)) == name:
                    keepers.append((int(entry), namespace))
        except OSError:
            continue
    killed = 0
    for pid, namespace in keepers:
        started = _procfs.start_time(pid)
        if members[namespace] == 1 and started is not None:
            killed += _procfs.signal_processes([(pid, started)], signal.SIGKILL)
    return killed


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
    unused: deque[int] = deque()  # pidfds of the keepers made and not taken, oldest first
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
            # Named after the run dir in `ps` (sleep's argv[0] is only its name).
            program = keeper_program()
            argv = (program[0], f"workbench-keeper {sys.argv[3]}", *program[1:])
            _serve(sock, parent, argv, unused)
    finally:
        for pidfd in unused:
            _procfs.pidfd_signal(pidfd, signal.SIGKILL)


def _serve(
    sock: socket.socket, parent: int, argv: tuple[str, ...], unused: deque[int]
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
        requests = sock.recv(64)
        if not requests:
            return
        for request in requests:
            if request == ord("t") and unused:
                os.close(unused.popleft())  # handed to a tree (or discarded by the shim)
            _make_one(sock, argv, own, stdio, unused)


def _make_one(
    sock: socket.socket, argv: tuple[str, ...], own: int, stdio: list[Any], unused: deque[int]
) -> None:  # pragma: no cover - the factory process
    """One keeper, recorded in `unused` and sent to the shim."""
    unshare(CLONE_NEWPID)
    try:
        pid = os.posix_spawn(
            argv[0],
            argv[1:],
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
    unused.append(pidfd)  # before anything else can fail: killed at the exit unless taken
    namespace = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    fds = array.array("i", [namespace, pidfd])
    try:
        sock.sendmsg([_PID.pack(pid)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
    finally:
        os.close(namespace)


if __name__ == "__main__":
    main()
