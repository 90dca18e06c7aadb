"""Whether something of a process tree listens on a TCP port, from /proc (no connection made).

The kernel's socket tables (`/proc/PID/net/tcp`, `tcp6`) are read in the tree's own network
namespace (a sandboxed tree has its own) for a listening socket on the port; only when there is
one are the tree's processes looked at, for a descriptor of that very socket. So another
program listening on the same port elsewhere never makes a service ready, and a wait that
finds nothing costs two small reads.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterable

import sandbox

_LISTEN = "0A"


_NETLINK_INET_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_TCP_LISTEN = 10
_HEADER = struct.Struct("=IHHII")
_REQUEST = struct.Struct("=BBBBI48s")
_MESSAGE = struct.Struct("=BBBB2sH44sIIIII")  # family, state, timer, retrans, sport (be), ..., inode


def _netlink_listening(port: int) -> set[int] | None:
    """The inodes of the TCP sockets listening on `port` in the daemon's own network namespace,
    asked of the kernel through sock_diag (it walks only the listening sockets); None when the
    kernel does not answer so. /proc/net/tcp walks every socket's hash bucket instead: on a large
    host it takes milliseconds, which polling every few milliseconds cannot afford."""
    found: set[int] = set()
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_INET_DIAG) as nl:
            for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), start=1):
                body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, 1 << _TCP_LISTEN, b"")
                head = _HEADER.pack(
                    _HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, seq, 0
                )
                nl.send(head + body)
                if not _read_dump(nl, port, found):
                    return None
    except OSError:
        return None
    return found


def _read_dump(nl: socket.socket, port: int, found: set[int]) -> bool:
    while True:
        data = nl.recv(65536)
        pos = 0
        while pos + _HEADER.size <= len(data):
            length, kind, _flags, _seq, _pid = _HEADER.unpack_from(data, pos)
            if kind == _NLMSG_DONE:
                return True
            if kind == _NLMSG_ERROR or length < _HEADER.size:
                return False
            if kind == _SOCK_DIAG_BY_FAMILY:
                fields = _MESSAGE.unpack_from(data, pos + _HEADER.size)
                if int.from_bytes(fields[4], "big") == port:
                    found.add(fields[11])
            pos += (length + 3) & ~3


def _same_netns(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
    except OSError:
        return False


def listening_sockets(pid: int | None, port: int) -> set[int]:
    """The inodes of the TCP sockets listening on `port` in the network namespace of `pid`."""
    if pid is None or _same_netns(pid):
        fast = _netlink_listening(port)
        if fast is not None:
            return fast
    return _proc_listening(pid, port)


def _proc_listening(pid: int | None, port: int) -> set[int]:
    """`listening_sockets` from /proc/PID/net/tcp and tcp6: slow on a large host, but in any
    network namespace."""
    base = f"/proc/{pid}/net" if pid is not None else "/proc/self/net"
    found: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{base}/{table}", encoding="ascii", errors="replace") as f:
                next(f, None)  # the header
                for line in f:
                    fields = line.split()
                    if len(fields) < 10 or fields[3] != _LISTEN:
                        continue
                    if int(fields[1].rpartition(":")[2], 16) == port:
                        found.add(int(fields[9]))
        except (OSError, ValueError):
            continue
    return found


def tree_pids(info: sandbox.ChildInfo) -> list[int]:
    """The live processes of an execution's tree: its cgroup's, else those carrying its tag."""
    if info.cgroup is not None and os.path.isdir(info.cgroup):
        try:
            return sandbox.cgroup_pids(info.cgroup)
        except (OSError, ValueError):
            return []
    if info.tag is None:
        return [info.pid] if sandbox.process_alive(info.pid, info.start_time) else []
    needle = f"{info.tag[0]}={info.tag[1]}".encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def holds_socket(pids: Iterable[int], inodes: set[int]) -> bool:
    """Whether one of `pids` has a descriptor of one of the sockets `inodes`."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                if os.readlink(f"/proc/{pid}/fd/{name}") in wanted:
                    return True
            except OSError:
                continue
    return False


def _netns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _members(info: sandbox.ChildInfo) -> list[int]:
    """Some processes of the tree, cheaply: its cgroup's, else the leader and its descendants
    through /proc/PID/task/*/children (at most 64)."""
    if info.cgroup is not None:
        return tree_pids(info)
    found: list[int] = []
    todo = [info.pid] if sandbox.process_alive(info.pid, info.start_time) else []
    while todo and len(found) < 64:
        pid = todo.pop()
        found.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                    todo.extend(int(child) for child in f.read().split())
        except OSError:
            continue
    return found


def candidates(info: sandbox.ChildInfo, port: int) -> set[int]:
    """The sockets listening on `port` in the network namespaces of the tree's processes (a
    sandboxed tree has one of its own, while its bubblewrap leader stays in the daemon's)."""
    by_netns: dict[str, int] = {}
    for pid in _members(info):
        netns = _netns(pid)
        if netns is not None:
            by_netns.setdefault(netns, pid)
    found: set[int] = set()
    for pid in by_netns.values():
        found |= listening_sockets(pid, port)
    return found


def tree_listens(info: sandbox.ChildInfo, port: int, inodes: set[int] | None = None) -> bool:
    """Whether a process of the tree `info` listens on TCP `port` (blocking: a worker thread).
    `inodes`: the listening sockets already found by `candidates`."""
    if inodes is None:
        inodes = candidates(info, port)
    return bool(inodes) and holds_socket(tree_pids(info), inodes)
