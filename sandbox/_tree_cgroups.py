"""The cgroups a shim makes for its trees: their parents, each tree's own, and their limits.

Cgroups live under one parent per run dir and hierarchy (``workbench-<hash>``), itself under the
shim's own cgroup there. Where the v2 hierarchy holds none of the controllers the limits use
(cgroup v1 controllers beside it, a "hybrid" machine) and trees get pid namespaces, the v2
parent is ``workbench-<hash>-threaded`` instead: a threaded domain whose children, the shim's
own (``shim``) and every tree's, are threaded cgroups. The shim then moves its one thread for
a spawn (`_cgroups.join_file`) without waiting for the kernel's RCU grace period, which moving a
whole process costs when the machine was idle (4-15 ms measured, more than the rest of a spawn).
A threaded cgroup has no cgroup.kill (`_cgroups.kill` freezes and kills instead), and its
tree's keeper kills everything in the tree's pid namespace either way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from . import _cgroups as cg
from ._detect import Capabilities
from ._errors import SpawnError
from ._model import Containment, Limits

#: The v2 parent's name is the run dir's `_cgroups.base_name` and this, where it is threaded.
THREADED_SUFFIX = "-threaded"
#: (the tree's cgroup, the shim's own cgroup in that hierarchy, the file a thread joins by).
Join = tuple[str, str, str]


class TreeCgroups:
    """The per-run-dir parents ([v2, v1 memory, v1 pids]; None: unusable) and the shim's homes."""

    def __init__(self, caps: Capabilities, run_dir: str, log: Callable[[str], None]) -> None:
        self.caps = caps
        self.log = log
        self.homes: list[str | None] = [caps.v2_parent, caps.memory_parent, caps.pids_parent]
        #: Whether the trees' v2 cgroups are threaded (and the shim sits in ``shim``).
        self.threaded = False
        self.bases = self._prepare_bases(cg.base_name(run_dir))

    def _prepare_bases(self, name: str) -> list[str | None]:
        bases: list[str | None] = []
        threaded = self._threaded_base(name)
        for i, home in enumerate(self.homes):
            if i == 0 and threaded is not None:
                bases.append(threaded)
                continue
            base = os.path.join(home, name) if home else None
            if base is not None:
                try:
                    cg.ensure(base)
                    remove_stale(base)
                except OSError as e:
                    self.log(f"cannot prepare {base}: {e}")
                    base = None
            bases.append(base)
        enable = [c for c, kind in (("memory", self.caps.memory), ("pids", self.caps.pids)) if kind == cg.V2]
        if bases[0] and enable:
            try:
                controllers = " ".join(f"+{c}" for c in enable)
                cg.write_file(os.path.join(bases[0], "cgroup.subtree_control"), controllers)
            except OSError as e:
                self.log(f"cannot enable {enable} in {bases[0]}: {e}")
        return bases

    def _threaded_base(self, name: str) -> str | None:
        """The threaded v2 parent, with the shim moved into its ``shim`` child, where the v2
        hierarchy holds no limit's controller and trees get pid namespaces; else None."""
        caps = self.caps
        if not (caps.v2_parent and caps.pidns) or cg.V2 in (caps.memory, caps.pids):
            return None
        base = os.path.join(caps.v2_parent, name + THREADED_SUFFIX)
        own = os.path.join(base, "shim")
        try:
            cg.ensure(base)
            remove_stale(base)
            cg.ensure(own)
            if (cg.read_file(os.path.join(own, "cgroup.type")) or "").strip() != "threaded":
                cg.make_threaded(own)
            # The shim's one move of its whole process: it waits for a grace period, once.
            cg.write_file(os.path.join(own, "cgroup.procs"), "0")
        except OSError as e:
            self.log(f"cannot prepare the threaded cgroup {own} ({e}): spawns move the whole shim")
            return None
        self.threaded = True
        self.homes[0] = own
        return base

    def send_home(self, pid: int) -> None:
        """Move a helper process the shim started (the keeper factory) back to the shim's
        original v2 cgroup, so that the shim's threaded one empties when the shim exits."""
        if self.threaded and self.caps.v2_parent:
            try:
                cg.write_file(os.path.join(self.caps.v2_parent, "cgroup.procs"), str(pid))
            except OSError as e:
                self.log(f"cannot move pid {pid} to {self.caps.v2_parent}: {e}")

    def joins(self, dirs: list[str | None]) -> list[Join]:
        """What the shim's thread joins for a spawn into `dirs`, and how it comes back."""
        kinds = [(cg.V2, self.threaded), (cg.V1, False), (cg.V1, False)]
        return [
            (d, home, cg.join_file(*kind))
            for d, home, kind in zip(dirs, self.homes, kinds, strict=True)
            if d and home
        ]

    def make(self, name: str, containment: Containment, limits: Limits) -> list[str | None]:
        """Create a tree's [v2, v1 memory, v1 pids] cgroups; the pids limit is written now (a
        fork bomb must not outrun its writing after the spawn), the memory limit later."""
        caps = self.caps
        memory, pids = limits.memory_bytes is not None, limits.max_processes is not None
        wanted = [
            containment is Containment.CGROUP
            or (memory and caps.memory == cg.V2)
            or (pids and caps.pids == cg.V2),
            memory and caps.memory == cg.V1,
            pids and caps.pids == cg.V1,
        ]
        dirs: list[str | None] = [None, None, None]
        try:
            for i, (want, base) in enumerate(zip(wanted, self.bases, strict=True)):
                if want:
                    if base is None:
                        raise SpawnError("the shim could not prepare its parent cgroup (see shim.log)")
                    directory = dirs[i] = os.path.join(base, name)
                    cg.make(directory)
                    if i == 0 and self.threaded:
                        cg.make_threaded(directory)
            self._preset_pids(dirs, limits)
        except BaseException as e:
            remove(dirs)
            if isinstance(e, FileExistsError):
                raise SpawnError(f"a cgroup named {name!r} already exists (a tree still running?)") from None
            if isinstance(e, OSError):
                raise SpawnError(f"cannot create the cgroups of {name!r}: {e}") from None
            raise
        return dirs

    def _pids_dir(self, dirs: list[str | None]) -> str | None:
        """The cgroup of `dirs` that holds the pids limit (v1's pids, or v2 where pids is there)."""
        v2, _v1_memory, v1_pids = dirs
        return v1_pids or (v2 if self.caps.pids == cg.V2 else None)

    def _preset_pids(self, dirs: list[str | None], limits: Limits) -> None:
        """The pids limit before the spawn: the shim, in the cgroup for that instant, counts as
        one of them, so at least 2 (its leader and it); the exact one follows (`apply_limits`)."""
        target = self._pids_dir(dirs)
        if limits.max_processes is not None and target:
            try:
                cg.set_pids_limit(target, max(limits.max_processes, 2))
            except OSError as e:
                why = f"cannot set the process limit to {limits.max_processes}: {e.strerror}"
                raise SpawnError(why) from None

    def apply_limits(self, dirs: list[str | None], limits: Limits) -> None:
        """Write the memory and pids limits, once the shim is out of these cgroups.

        Written after the spawn so that the shim, in them for an instant, never counts against
        them nor can be chosen by their OOM killer. Raises OSError.
        """
        v2, v1_memory, _v1_pids = dirs
        memory, pids = limits.memory_bytes, limits.max_processes
        try:
            if memory is not None and v1_memory:
                cg.set_memory_limit(cg.V1, v1_memory, memory)
            elif memory is not None and v2 and self.caps.memory == cg.V2:
                cg.set_memory_limit(cg.V2, v2, memory)
        except OSError as e:
            # cgroup v1 refuses a limit below what the tree already uses (EBUSY).
            raise OSError(e.errno, f"cannot set the memory limit to {memory} bytes: {e.strerror}") from None
        target = self._pids_dir(dirs)
        if pids is not None and target:
            try:
                cg.set_pids_limit(target, pids)
            except OSError as e:
                raise OSError(e.errno, f"cannot set the process limit to {pids}: {e.strerror}") from None

    def close(self) -> None:
        """Remove every empty cgroup left under the parents, and the parents if empty (shim exit)."""
        if self.threaded and self.caps.v2_parent:
            # Back where it started, so that its own threaded cgroup can go too.
            with contextlib.suppress(OSError):
                cg.write_file(os.path.join(self.caps.v2_parent, "cgroup.procs"), "0")
        for base in self.bases:
            if base is not None:
                remove_stale(base)
                with contextlib.suppress(OSError):  # a live tree stays, for a later shim
                    os.rmdir(base)


def remove(dirs: list[str | None]) -> None:
    """Remove the cgroups `dirs` (those that hold no process)."""
    for directory in dirs:
        if directory:
            cg.remove_tree(directory)


def remove_stale(base: str) -> None:
    """Remove the empty cgroups left under `base` (a populated one holds a live tree: kept)."""
    for entry in os.scandir(base):
        if entry.is_dir(follow_symlinks=False):
            cg.remove_tree(entry.path)
