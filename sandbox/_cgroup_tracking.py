"""A tree held by its cgroup v2 (the ``cgroup`` containment), and by its pid namespace's keeper."""

from __future__ import annotations

import contextlib
import os
import signal

from . import _cgroups as cg
from . import _procfs
from ._model import ChildInfo, Limits
from ._tracking import Host, Tracked


class CgroupTracked(Tracked):
    """A cgroup v2 per execution: cgroup.kill kills it, cgroup.events says when it is empty.

    Where the tree also has a pid namespace, its keeper (the namespace's idle init) dies with
    the tree: SIGKILLed with it, or once its cgroup is empty after the leader's exit. Only then
    is the tree empty, as the kernel kills every process of the namespace (those that wrote
    themselves into another cgroup too) and frees them all before the keeper can be reaped.
    """

    def __init__(self, host: Host, info: ChildInfo, limits: Limits, adopted: bool) -> None:
        super().__init__(host, info, limits, adopted)
        assert info.cgroup is not None
        self.cgroup = info.cgroup
        self.wd: int | None = None
        self.keeper_alive = info.keeper is not None
        self.keeper_fd: int | None = None  # pidfd of a keeper that is not the shim's child

    def start(self) -> bool:
        try:
            self.wd = self.host.watch_file(os.path.join(self.cgroup, "cgroup.events"), self._events)
        except (FileNotFoundError, NotADirectoryError):
            if not self.adopted:
                raise
            return False  # the cgroup is gone
        super().start()
        if self.adopted and self.info.keeper is not None:
            self.keeper_fd = _procfs.open_pidfd(*self.info.keeper)
            self.keeper_alive = self.keeper_fd is not None
            if self.keeper_fd is not None:
                self.host.watch_fd(self.keeper_fd, self._keeper_fd_died)
        populated = cg.populated(self.cgroup)
        if self.adopted and not populated and not self.keeper_alive and self.leader_fd is None:
            self.close()
            return False
        if self.status is not None:
            self.exit_announced = True  # the adopt reply carries it
            self.empty = not populated and self._namespace_empty()
        return True

    def _events(self) -> None:
        if self.status is not None and not cg.populated(self.cgroup) and self._namespace_empty():
            self.became_empty()

    def check_empty(self) -> None:
        # The kernel updates "populated" before the parent gets SIGCHLD, so a lone leader's
        # cgroup already reads empty here: the common case needs no second event.
        if not cg.populated(self.cgroup):
            if not self._namespace_empty():
                return  # announced once the keeper is reaped, which follows at once
            self.empty = True
        self.announce_exit()

    def _namespace_empty(self) -> bool:
        """Whether the tree's pid namespace holds nothing alive, once its cgroup is empty and
        its leader reaped; if it may, kill the keeper (the tree is empty once it is reaped).

        Every other process of the namespace, alive or still exiting, has then lost its cgroup
        and its line of ancestors back to the leader, so the topmost of them is a child of the
        keeper (orphans go to the namespace's init): none there means none at all. The keeper
        is killed either way, but need not be waited for when it was alone.
        """
        if not self.keeper_alive:
            return True
        alone = False
        if self.info.keeper is not None:
            pid = self.info.keeper[0]
            alone = cg.read_file(f"/proc/{pid}/task/{pid}/children") == ""
        self._kill_keeper()
        if alone:
            self.keeper_alive = False  # its reaping, or its pidfd, says nothing new
        return alone

    def keeper_died(self) -> None:
        """The keeper is gone: so is every process of the tree's pid namespace."""
        self.keeper_alive = False
        if self.status is not None and not cg.populated(self.cgroup):
            self.became_empty()

    def hold_keeper(self, pidfd: int) -> None:
        """Watch (and own) the pidfd of its keeper, one the factory made (not the shim's child)."""
        self.keeper_fd = pidfd
        self.host.watch_fd(pidfd, self._keeper_fd_died)

    def _keeper_fd_died(self) -> None:
        self._close_keeper_fd()
        self.keeper_died()

    def _kill_keeper(self) -> None:
        if not self.keeper_alive:
            return
        if self.keeper_fd is not None:
            _procfs.pidfd_signal(self.keeper_fd, signal.SIGKILL)
        elif self.info.keeper is not None:
            # Our child and not yet reaped: its pid cannot have been reused.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.info.keeper[0], signal.SIGKILL)

    def signal(self, sig: int) -> None:
        if sig == signal.SIGKILL:
            cg.kill(self.cgroup)
            # Processes that left the cgroup are still in the namespace: they die with it.
            self._kill_keeper()
            return
        targets = []
        for pid in cg.procs(self.cgroup):
            started = _procfs.start_time(pid)
            if started is not None:
                targets.append((pid, started))
        _procfs.signal_processes(targets, sig)

    def _close_keeper_fd(self) -> None:
        if self.keeper_fd is not None:
            self.host.unwatch_fd(self.keeper_fd)
            os.close(self.keeper_fd)
            self.keeper_fd = None

    def close(self) -> None:
        super().close()
        self._close_keeper_fd()
        if self.wd is not None:
            self.host.unwatch_file(self.wd)
            self.wd = None
