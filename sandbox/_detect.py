"""What this machine lets the sandbox do: which containments and which limit controllers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _cgroups as cg
from ._errors import ContainmentUnavailable
from ._linux import probe_pid_namespace
from ._model import Containment

_PREFERENCE = (Containment.CGROUP, Containment.PIDNS, Containment.PGROUP)


@dataclass(frozen=True)
class Capabilities:
    """What works here, and why what does not.

    The ``*_parent`` fields are the cgroupfs directories (this process's own cgroups) under
    which per-run-dir cgroups are made; `memory` and `pids` say which hierarchy enforces that
    limit (``"v2"``, ``"v1"`` or None: rlimits only). `reasons` maps ``cgroup``, ``pidns``,
    ``memory`` and ``pids`` to a human-readable reason when that one is unavailable.
    """

    cgroup: bool
    pidns: bool
    memory: str | None
    pids: str | None
    v2_parent: str | None = None
    memory_parent: str | None = None
    pids_parent: str | None = None
    reasons: Mapping[str, str] = field(default_factory=dict)

    def available(self, containment: Containment) -> bool:
        """Whether `containment` works here (AUTO always does)."""
        if containment is Containment.CGROUP:
            return self.cgroup
        if containment is Containment.PIDNS:
            return self.pidns
        return True

    def resolve(self, containment: Containment) -> Containment:
        """The concrete containment to use for `containment` (AUTO: the strongest available).

        Raises:
            ContainmentUnavailable: a forced containment does not work here (with the reason).
        """
        if containment is Containment.AUTO:
            return next(c for c in _PREFERENCE if self.available(c))
        if not self.available(containment):
            reason = self.reasons.get(str(containment), "not supported")
            raise ContainmentUnavailable(f"containment {containment!s} is unavailable here: {reason}")
        return containment

    def describe(self) -> str:
        """One line for a log: the containment AUTO picks and how limits are enforced."""
        limits = ", ".join(
            f"{name} via cgroup {kind}" if kind else f"{name} via rlimit only"
            for name, kind in (("memory", self.memory), ("pids", self.pids))
        )
        unavailable = "; ".join(f"{k}: {v}" for k, v in sorted(self.reasons.items()))
        text = f"containment {self.resolve(Containment.AUTO)}; {limits}"
        return f"{text}; unavailable: {unavailable}" if unavailable else text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return {
            "cgroup": self.cgroup,
            "pidns": self.pidns,
            "memory": self.memory,
            "pids": self.pids,
            "v2Parent": self.v2_parent,
            "memoryParent": self.memory_parent,
            "pidsParent": self.pids_parent,
            "reasons": dict(self.reasons),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Capabilities:
        """Rebuild from `to_dict()` output."""
        return cls(
            cgroup=bool(data["cgroup"]),
            pidns=bool(data["pidns"]),
            memory=data.get("memory"),
            pids=data.get("pids"),
            v2_parent=data.get("v2Parent"),
            memory_parent=data.get("memoryParent"),
            pids_parent=data.get("pidsParent"),
            reasons=dict(data.get("reasons") or {}),
        )


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _probe(parent: str, required: tuple[str, ...]) -> str | None:
    """Create and remove a cgroup under `parent`; None if that works and has `required` files."""
    probe = os.path.join(parent, f"workbench-probe-{os.getpid()}-{os.urandom(3).hex()}")
    try:
        os.mkdir(probe)
    except OSError as e:
        return f"cannot create a cgroup under {parent}: {e.strerror}"
    try:
        missing = [name for name in required if not os.path.exists(os.path.join(probe, name))]
        if missing:
            return f"{', '.join(missing)} missing in {parent} (kernel too old?)"
        return None
    finally:
        os.rmdir(probe)


def _locate(hierarchy: cg.Hierarchy | None, path: str | None, what: str) -> tuple[str | None, str | None]:
    """(cgroupfs directory of this process in that hierarchy, None) or (None, why not)."""
    if hierarchy is None:
        return None, f"no {what} hierarchy is mounted"
    if path is None:
        return None, f"this process is in no {what} cgroup"
    directory = cg.directory(hierarchy, path)
    if directory is None:
        return None, f"this process's {what} cgroup {path} is outside the mount {hierarchy.mountpoint}"
    return directory, None


def _v2_controller(parent: str, own_path: str, controller: str) -> str | None:
    """None if children of `parent` can have `controller` (enabling it at the root), else why not.

    A non-root cgroup can only hand a controller to its children while it holds no process
    ("no internal processes"); this process (and the daemon) live in `parent`, so only the
    hierarchy root, which is exempt, can enable it here.
    """
    if controller in _read(os.path.join(parent, "cgroup.subtree_control")).split():
        return None
    if controller not in _read(os.path.join(parent, "cgroup.controllers")).split():
        return f"the cgroup v2 {controller} controller is not available in {parent}"
    if own_path != "/":
        return (
            f"cannot enable the cgroup v2 {controller} controller below {parent}: "
            "it holds processes (no-internal-processes rule)"
        )
    try:
        cg.write_file(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
    except OSError as e:
        return f"cannot enable the cgroup v2 {controller} controller in {parent}: {e.strerror}"
    return None


def detect() -> Capabilities:
    """Probe what this machine allows, for this process and the processes it starts.

    Creates and removes probe cgroups, tries unshare(CLONE_NEWPID) (without forking), and, at
    the root of a cgroup v2 hierarchy only, enables the memory and pids controllers for its
    children. Safe to call from a threaded process.

    Returns:
        The capabilities, with a reason for each unavailable feature.
    """
    v2_hierarchy, v1_hierarchies = cg.find_hierarchies(_read("/proc/self/mountinfo"))
    v2_path, v1_paths = cg.own_cgroups(_read("/proc/self/cgroup"))
    reasons: dict[str, str] = {}

    v2_parent, why = _locate(v2_hierarchy, v2_path, "cgroup v2")
    if v2_parent is not None:
        why = _probe(v2_parent, ("cgroup.kill", "cgroup.events", "cgroup.procs"))
        if why is None and not os.access(os.path.join(v2_parent, "cgroup.procs"), os.W_OK):
            why = f"cannot move processes out of {v2_parent}: no write access to its cgroup.procs"
        if why is not None:
            v2_parent = None
    if why:
        reasons["cgroup"] = why

    why = probe_pid_namespace()
    if why:
        reasons["pidns"] = why

    limits: dict[str, str | None] = {}
    v1_parents: dict[str, str | None] = {}
    for controller, marker in (("memory", "memory.limit_in_bytes"), ("pids", "pids.max")):
        limits[controller] = v1_parents[controller] = None
        v2_why = "no usable cgroup v2 hierarchy"
        if v2_parent is not None and v2_path is not None:
            v2_why = _v2_controller(v2_parent, v2_path, controller) or ""
            if not v2_why:
                limits[controller] = cg.V2
                continue
        parent, v1_why = _locate(
            v1_hierarchies.get(controller), v1_paths.get(controller), f"cgroup v1 {controller}"
        )
        if parent is not None:
            v1_why = _probe(parent, (marker,))
        if v1_why is None:
            limits[controller], v1_parents[controller] = cg.V1, parent
        else:
            reasons[controller] = f"{v2_why}; {v1_why}"

    return Capabilities(
        cgroup=v2_parent is not None,
        pidns="pidns" not in reasons,
        memory=limits["memory"],
        pids=limits["pids"],
        v2_parent=v2_parent,
        memory_parent=v1_parents["memory"],
        pids_parent=v1_parents["pids"],
        reasons=reasons,
    )
