"""Whether something of a process tree listens on a TCP port, from /proc (no connection made).

The kernel's socket tables (`/proc/PID/net/tcp`, `tcp6`) are read in the tree's own network
namespace (a sandboxed tree has its own) for a listening socket on the port; only when there is
one are the tree's processes looked at, for a descriptor of that very socket. So another
program listening on the same port elsewhere never makes a service ready, and a wait that
finds nothing costs two small reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import sandbox

_LISTEN = "0A"


def listening_sockets(pid: int | None, port: int) -> set[int]:
    """The inodes of the TCP sockets listening on `port` in the network namespace of `pid`."""
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
        pids: list[int] = []
        for directory, _dirs, files in os.walk(info.cgroup):
            if "cgroup.procs" in files:
                try:
                    with open(os.path.join(directory, "cgroup.procs"), encoding="ascii") as f:
                        pids.extend(int(line) for line in f if line.strip())
                except OSError:
                    continue
        return pids
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


def tree_listens(info: sandbox.ChildInfo, port: int) -> bool:
    """Whether a process of the tree `info` listens on TCP `port` (blocking: a worker thread)."""
    leader_alive = sandbox.process_alive(info.pid, info.start_time)
    pids: list[int] | None = None
    netns_pid: int | None = info.pid
    if not leader_alive:
        pids = tree_pids(info)
        if not pids:
            return False
        netns_pid = pids[0]
    inodes = listening_sockets(netns_pid, port)
    if not inodes:
        return False
    return holds_socket(pids if pids is not None else tree_pids(info), inodes)
