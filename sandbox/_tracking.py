"""One execution held by the shim: when its leader exits, when its tree is empty, how to signal it.

The three containments differ in exactly three things, which the subclasses implement (the
cgroup one in `sandbox._cgroup_tracking`):
how "empty" is learnt (cgroup.events via inotify; the reaping of the namespace's init; sweeps
of /proc with pidfds on what they found), how a signal reaches the whole tree, and how the
hard kill works (cgroup.kill; SIGKILL to init; SIGSTOP+SIGKILL sweeps until none is left).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
from collections.abc import Callable
from typing import Any, Protocol

from . import _cgroups as cg
from . import _procfs
from ._files import read_status_file, write_status_file
from ._model import (
    LIMIT_CPU,
    LIMIT_FILE_SIZE,
    LIMIT_OOM,
    UNKNOWN_EXIT,
    ChildInfo,
    ExitStatus,
    KnownChild,
    Limits,
)
from ._terminal import Channel


class Host(Protocol):
    """What a tracked execution needs from the shim's event loop."""

    pid: int

    def log(self, message: str) -> None:
        """Write a line to the shim's log."""

    def emit(self, message: dict[str, Any]) -> None:
        """Send an event to the connected client, if any."""

    def watch_fd(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` is readable."""

    def watch_fd_writable(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` is writable."""

    def unwatch_fd(self, fd: int) -> None:
        """Stop watching `fd`."""

    def watch_file(self, path: str, callback: Callable[[], None]) -> int:
        """Call `callback()` when `path` is modified (inotify); returns the watch id."""

    def unwatch_file(self, wd: int) -> None:
        """Stop watching a file."""

    def need_sweep(self, tracked: Tracked) -> None:
        """Call `tracked.sweep(...)` at the end of this loop iteration (one /proc pass for all)."""

    def is_leader(self, pid: int) -> bool:
        """Whether `pid` is the (unreaped) leader of an execution the shim started."""


def classify_limit(status: ExitStatus, limits: Limits, oom_kills: int | None, cpu: float) -> str | None:
    """Which limit killed the leader, if any.

    A signal names it exactly; the exit codes 128+SIGXCPU and 128+SIGXFSZ are what a shell
    reports for a child the limit killed, so they count when that limit was set.
    """
    sig, code = status.signal, status.exit_code
    if sig == signal.SIGXCPU:
        return LIMIT_CPU
    if sig == signal.SIGXFSZ:
        return LIMIT_FILE_SIZE
    if oom_kills and code != 0:
        return LIMIT_OOM
    if limits.cpu_seconds is not None and (
        code == 128 + signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_seconds)
    ):
        return LIMIT_CPU
    if limits.max_file_size_bytes is not None and code == 128 + signal.SIGXFSZ:
        return LIMIT_FILE_SIZE
    return None


class Tracked:
    """An execution's state in the shim. Subclasses implement one containment each."""

    def __init__(self, host: Host, info: ChildInfo, limits: Limits, adopted: bool) -> None:
        self.host = host
        self.info = info
        self.limits = limits
        self.adopted = adopted
        self.status: ExitStatus | None = None
        self.empty = False
        self.exit_announced = False
        self.leader_fd: int | None = None  # pidfd of an adopted leader (not our child)
        #: Its open stdin or terminal (started by this shim with one), closed once it is empty.
        self.channel: Channel | None = None
        self.memory: tuple[str, str] | None = None
        if info.memory_cgroup:
            self.memory = (cg.V1, info.memory_cgroup)
        elif info.cgroup and os.path.exists(os.path.join(info.cgroup, "memory.events")):
            self.memory = (cg.V2, info.cgroup)

    @property
    def name(self) -> str:
        """The execution's name."""
        return self.info.name

    @property
    def finished(self) -> bool:
        """The leader exited and nothing of the tree is alive."""
        return self.status is not None and self.empty

    def known(self) -> KnownChild:
        """The client's view."""
        return KnownChild(self.info, self.status, self.empty)

    def start(self) -> bool:
        """Begin watching; False if an adopted tree turned out to be gone already.

        Raises:
            OSError: a new execution cannot be watched (e.g. no inotify watch left).
        """
        if self.adopted:
            self.leader_fd = _procfs.open_pidfd(self.info.pid, self.info.start_time)
            if self.leader_fd is None:
                # Died while no shim watched: the old shim may have recorded how.
                self.status = read_status_file(self.info.dir, self.info) or UNKNOWN_EXIT
            else:
                self.host.watch_fd(self.leader_fd, self._adopted_leader_died)
        return True

    def _adopted_leader_died(self) -> None:
        self._close_leader_fd()
        self.leader_exited(read_status_file(self.info.dir, self.info) or UNKNOWN_EXIT)

    def _close_leader_fd(self) -> None:
        if self.leader_fd is not None:
            self.host.unwatch_fd(self.leader_fd)
            os.close(self.leader_fd)
            self.leader_fd = None

    def reaped(self, wait_status: int, usage: resource.struct_rusage) -> None:
        """The leader (our child) was reaped: record how it ended, with the limit that killed it."""
        status = ExitStatus.from_wait_status(wait_status)
        oom_kills = peak = None
        if self.memory is not None:
            oom_kills = cg.oom_kills(*self.memory)
            peak = cg.memory_peak(*self.memory)
        limit = classify_limit(status, self.limits, oom_kills, usage.ru_utime + usage.ru_stime)
        # The cgroup counts every process of the tree (escapees too); the rusage only the
        # leader and the children it waited for.
        cpu = cg.cpu_times_ms(self.info.cgroup) if self.info.cgroup else None
        if cpu is None:
            cpu = round(usage.ru_utime * 1000), round(usage.ru_stime * 1000)
        if peak is None and usage.ru_maxrss > 0:
            peak = usage.ru_maxrss * 1024  # KiB on Linux
        status = ExitStatus(status.exit_code, status.signal, limit, peak, oom_kills, *cpu)
        try:
            write_status_file(self.info.dir, self.info, status)
        except OSError as e:
            self.host.log(f"cannot write the status of {self.name}: {e}")
        self.leader_exited(status)

    def leader_exited(self, status: ExitStatus) -> None:
        """Record the leader's end; announce it once emptiness is judged."""
        self.status = status
        self.check_empty()

    def announce_exit(self) -> None:
        """Send the exited event (with the current emptiness)."""
        assert self.status is not None
        self.exit_announced = True
        if self.channel is not None:
            # The client reads the spool file to its end on this event: copy what is there first.
            self.channel.drain()
            if self.empty:
                self.channel.close()
        self.host.emit(
            {"event": "exited", "name": self.name, "status": self.status.to_dict(), "empty": self.empty}
        )

    def became_empty(self) -> None:
        """Nothing of the tree is alive any more (only meaningful once the leader exited)."""
        if self.empty or self.status is None:
            return
        self.empty = True
        if self.exit_announced:
            if self.channel is not None:
                self.channel.close()
            self.host.emit({"event": "empty", "name": self.name})
        else:
            self.announce_exit()

    def check_empty(self) -> None:
        """Judge emptiness after the leader's exit; subclasses decide how."""
        raise NotImplementedError

    def signal(self, sig: int) -> None:
        """Send `sig` to every process of the tree; SIGKILL is the containment's hard kill."""
        raise NotImplementedError

    def kill_leader(self) -> None:
        """SIGKILL the leader, if it has not exited."""
        if self.status is not None:
            return
        if self.leader_fd is not None:
            _procfs.pidfd_signal(self.leader_fd, signal.SIGKILL)
        else:
            # Our child and not yet reaped: its pid cannot have been reused.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.info.pid, signal.SIGKILL)

    def sweep(self, snap: dict[int, _procfs.ProcStat], shim_tree: set[int]) -> None:
        """A requested /proc pass (pgroup only)."""

    def keeper_died(self) -> None:
        """Its pid namespace's keeper was reaped (cgroup only)."""

    def close(self) -> None:
        """Stop watching (before the shim forgets it or exits)."""
        self._close_leader_fd()
        if self.channel is not None:
            self.channel.close()

    def remove_cgroups(self) -> list[str]:
        """Remove the execution's cgroups; returns those that could not be removed."""
        dirs = [self.info.cgroup, self.info.memory_cgroup, self.info.pids_cgroup]
        return [d for d in dirs if d and not cg.remove_tree(d)]


class PidnsTracked(Tracked):
    """A pid namespace per execution: killing its init kills everything in it."""

    def __init__(self, host: Host, info: ChildInfo, limits: Limits, adopted: bool) -> None:
        super().__init__(host, info, limits, adopted)
        self.namespace = _procfs.pid_namespace(info.pid)

    def start(self) -> bool:
        super().start()
        if self.adopted and self.leader_fd is None:
            self.close()
            return False  # init is dead, so is the namespace
        return True

    def check_empty(self) -> None:
        # init exits last: the kernel kills and reaps the rest of the namespace first.
        self.empty = True
        self.announce_exit()

    def signal(self, sig: int) -> None:
        if self.status is not None:
            return
        if sig == signal.SIGKILL:
            self.kill_leader()
            return
        # init ignores signals it has no handler for: a grace signal must reach every member.
        targets = []
        for stat in _procfs.snapshot().values():
            if stat.alive and _procfs.pid_namespace(stat.pid) == self.namespace:
                targets.append((stat.pid, stat.start_time))
        _procfs.signal_processes(targets, sig)


class PgroupTracked(Tracked):
    """The leader's session and process group, the tag, and the shim as subreaper; swept.

    Members are the processes whose process group or session is the leader's pid, those whose
    environment holds the tag, and the descendants of all of these. For a tree the shim
    started, only the shim's descendants are candidates: as child subreaper, it inherits every
    orphan of the tree, so no member can be anywhere else (and unrelated processes, their
    environments unread, cannot be mistaken for members). An adopted tree has no such bound.

    Group, session and tag can all be shed (``setsid env -i ...``), but an orphan cannot stop
    being the shim's child: every child of the shim that is no leader (a stray), started after
    this leader, counts as a member with its descendants. Which tree a stray came from is not
    recorded by the kernel, so with several trees at once it belongs to each that started
    before it: killing any of them kills it, and each waits for it.
    """

    def __init__(self, host: Host, info: ChildInfo, limits: Limits, adopted: bool) -> None:
        super().__init__(host, info, limits, adopted)
        self.tag_entry = f"{info.tag[0]}={info.tag[1]}".encode() if info.tag else None
        self.killing = False
        self.waiting: dict[int, int] = {}  # pidfd -> pid of members we wait to die

    def start(self) -> bool:
        super().start()
        if self.adopted and self.leader_fd is None:
            snap = _procfs.snapshot()
            if not self.members(snap, None):
                return False
            self.exit_announced = True
            self.host.need_sweep(self)
        return True

    def members(
        self, snap: dict[int, _procfs.ProcStat], shim_tree: set[int] | None
    ) -> list[_procfs.ProcStat]:
        """The live members of the tree in `snap` (`shim_tree`: the candidates, if bounded)."""
        leader = self.info.pid
        current = snap.get(leader)
        # A live process on the leader's pid with another start time means the pid (and so
        # any group or session of that number) now belongs to someone else.
        reused = current is not None and current.start_time != self.info.start_time
        candidates = snap.values() if shim_tree is None else [snap[p] for p in shim_tree if p in snap]
        seed: set[int] = set()
        for stat in candidates:
            if stat.pid == self.host.pid or not stat.alive:
                continue
            in_group = not reused and (stat.pgid == leader or stat.sid == leader)
            tagged = (
                not in_group
                and self.tag_entry is not None
                and stat.ppid != 2  # kernel threads have no environment
                and stat.pid != 2
                and _procfs.environ_has(stat.pid, self.tag_entry)
            )
            stray = (
                shim_tree is not None
                and stat.ppid == self.host.pid
                and stat.start_time >= self.info.start_time
                and not self.host.is_leader(stat.pid)
            )
            if in_group or tagged or stray:
                seed.add(stat.pid)
        found = _procfs.descendants(snap, seed)
        return [snap[pid] for pid in found if pid != self.host.pid and snap[pid].alive]

    def check_empty(self) -> None:
        self.host.need_sweep(self)

    def sweep(self, snap: dict[int, _procfs.ProcStat], shim_tree: set[int]) -> None:
        waited = set(self.waiting.values())
        for stat in self.members(snap, None if self.adopted else shim_tree):
            if stat.pid in waited:
                continue
            fd = _procfs.open_pidfd(stat.pid, stat.start_time)
            if fd is not None:
                self.waiting[fd] = stat.pid
                self.host.watch_fd(fd, functools.partial(self._member_died, fd))
        if self.killing and self.waiting:
            # Stop them all first, so none can fork between being found and being killed.
            for fd in self.waiting:
                _procfs.pidfd_signal(fd, signal.SIGSTOP)
            for fd in self.waiting:
                _procfs.pidfd_signal(fd, signal.SIGKILL)
        if self.status is None:
            return
        if not self.waiting:
            self.became_empty()
        elif not self.exit_announced:
            self.announce_exit()

    def _member_died(self, fd: int) -> None:
        self.host.unwatch_fd(fd)
        os.close(fd)
        del self.waiting[fd]
        if not self.waiting:
            # The dead may have left children behind (reparented, still members): look again.
            self.host.need_sweep(self)

    def signal(self, sig: int) -> None:
        if self.finished:
            return
        if sig == signal.SIGKILL:
            self.killing = True
            self.host.need_sweep(self)
            return
        snap = _procfs.snapshot()
        shim_tree = None if self.adopted else _procfs.descendants(snap, [self.host.pid])
        members = self.members(snap, shim_tree)
        _procfs.signal_processes(((s.pid, s.start_time) for s in members), sig)

    def close(self) -> None:
        super().close()
        for fd in self.waiting:
            self.host.unwatch_fd(fd)
            os.close(fd)
        self.waiting.clear()
