"""Reading processes from /proc, and signalling them without pid-reuse races.

A process's identity is its pid together with its start time (field 22 of /proc/PID/stat, in
clock ticks since boot): a reused pid has another start time.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from typing import NamedTuple


class ProcStat(NamedTuple):
    """The fields of /proc/PID/stat the sandbox uses (a tuple: sweeps make thousands)."""

    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int
    start_time: int

    @property
    def alive(self) -> bool:
        """Not a zombie (zombies count as dead: they only wait to be reaped)."""
        return self.state not in ("Z", "X")


def _read(path: str, whole: bool) -> bytes | None:
    # os.open/os.read rather than open(): sweeps read every process's files, and the file
    # objects of open() double the cost of each read. A stat fits in one read.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
        if whole and len(data) == 4096:
            chunks = [data]
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def cmdline_starts_with(pid: int, prefix: bytes) -> bool:
    """Whether the command line of `pid` begins with `prefix` (False where it cannot be read)."""
    data = _read(f"/proc/{pid}/cmdline", whole=len(prefix) >= 4096)
    return data is not None and data.startswith(prefix)


def read_stat(pid: int) -> ProcStat | None:
    """The stat of `pid`, or None if there is no such process."""
    data = _read(f"/proc/{pid}/stat", whole=False)
    if not data:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    rest = data[data.rfind(b")") + 2 :].split(maxsplit=20)
    return ProcStat(pid, rest[0].decode(), int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19]))


def start_time(pid: int) -> int | None:
    """The start time of `pid` (its identity with the pid), or None if it does not exist."""
    stat = read_stat(pid)
    return stat.start_time if stat else None


def process_alive(pid: int, start_time: int) -> bool:
    """Whether the process `pid` started at `start_time` still runs (a zombie does not).

    Args:
        pid: the process id.
        start_time: field 22 of its /proc/PID/stat, as recorded when it started.

    Returns:
        True only if a process with that pid and that start time exists and is not a zombie.
    """
    stat = read_stat(pid)
    return stat is not None and stat.start_time == start_time and stat.alive


def all_pids() -> list[int]:
    """Every pid currently in /proc."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def snapshot() -> dict[int, ProcStat]:
    """The stat of every process (one pass over /proc)."""
    result: dict[int, ProcStat] = {}
    for pid in all_pids():
        stat = read_stat(pid)
        if stat is not None:
            result[pid] = stat
    return result


def descendants(snap: dict[int, ProcStat], roots: Iterable[int]) -> set[int]:
    """`roots` and every process below them in `snap`'s parent links."""
    children: dict[int, list[int]] = {}
    for stat in snap.values():
        children.setdefault(stat.ppid, []).append(stat.pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, ()))
    return found


def environ_has(pid: int, entry: bytes) -> bool:
    """Whether `pid`'s initial environment holds `entry` (``NAME=VALUE``) exactly."""
    data = _read(f"/proc/{pid}/environ", whole=True)
    return data is not None and entry in data.split(b"\0")


def pid_namespace(pid: int) -> str | None:
    """The pid namespace `pid` lives in (e.g. ``pid:[4026532300]``), or None if it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def open_pidfd(pid: int, start_time: int) -> int | None:
    """A pidfd on the live process (`pid`, `start_time`), or None if it is gone or a zombie.

    The start time is checked after the pidfd is open, so the fd refers to that very
    process and signals sent through it can never hit a process that reused the pid.
    """
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    stat = read_stat(pid)
    if stat is None or stat.start_time != start_time or not stat.alive:
        os.close(fd)
        return None
    return fd


def pidfd_signal(fd: int, sig: int) -> None:
    """Send `sig` through a pidfd; a process that already died is not an error."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(fd, sig)


def grace_order(procs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """(pid, start_time) pairs, oldest first: a parent before its children (it started no later;
    at the same clock tick, its pid is the lower one but after a wrap-around)."""
    return sorted(procs, key=lambda p: (p[1], p[0]))


def signal_processes(procs: Iterable[tuple[int, int]], sig: int) -> int:
    """Send `sig` to each live (pid, start_time), parents first; returns how many were signalled.

    Parents first: a shell in `wait` with a trap for `sig` must have it pending before its child
    dies of it, else `wait` returns, the shell exits, and the trap never runs.
    """
    count = 0
    for pid, started in grace_order(procs):
        fd = open_pidfd(pid, started)
        if fd is not None:
            try:
                pidfd_signal(fd, sig)
                count += 1
            finally:
                os.close(fd)
    return count
