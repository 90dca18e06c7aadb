"""The values the sandbox takes and gives: specs, identities and exit statuses.

All of them are frozen and convert to and from JSON-able dicts (camelCase keys, like the files
the shim writes), so that the daemon can store them and the shim can send them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,80}")

#: The name prefix of a pre-started leader waiting to be claimed (`Supervisor.claim`): the shim
#: kills those still unclaimed when its client leaves.
WARM_PREFIX = "warm-"

#: ExitStatus.limit values: which limit killed the leader.
LIMIT_OOM = "oom"
LIMIT_CPU = "cpu_limit"
LIMIT_FILE_SIZE = "file_size_limit"


class Containment(StrEnum):
    """How an execution's process tree is held (and killed as one)."""

    AUTO = "auto"  # the strongest this machine allows: cgroup > pidns > pgroup
    CGROUP = "cgroup"  # a cgroup v2 per execution; kill = cgroup.kill
    PIDNS = "pidns"  # a pid namespace per execution; kill = SIGKILL to its init
    PGROUP = "pgroup"  # session + process group + env tag, swept; the shim is a subreaper


def validate_name(name: str) -> str:
    """Return `name` if it is a valid execution name, else raise ValueError.

    Valid names match ``[A-Za-z0-9_.-]{1,80}`` and are not ``.`` or ``..`` (they name
    directories and cgroups).
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or name in (".", ".."):
        raise ValueError(f"invalid execution name {name!r}: use 1-80 of [A-Za-z0-9_.-]")
    return name


def _check_path(what: str, path: str) -> None:
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        raise ValueError(f"{what} must be an absolute path, got {path!r}")


def _check_count(what: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValueError(f"{what} must be a positive integer or None, got {value!r}")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one execution; None means unlimited.

    Cgroup controllers enforce memory_bytes and max_processes for the whole tree where the
    machine has them; rlimits (per process) are applied in every case, except RLIMIT_AS,
    which stands in for memory_bytes only where no memory controller exists.
    """

    max_processes: int | None = None
    max_open_files: int | None = None
    max_file_size_bytes: int | None = None
    cpu_seconds: int | None = None
    memory_bytes: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_count(f.name, getattr(self, f.name))

    def to_dict(self) -> dict[str, int | None]:
        """The limits as a JSON-able dict."""
        return {_camel(f.name): getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Limits:
        """Rebuild limits from `to_dict()` output (missing keys mean unlimited)."""
        return cls(**{f.name: data.get(_camel(f.name)) for f in fields(cls)})


@dataclass(frozen=True)
class SpawnSpec:
    """What to run and how.

    The process gets exactly `env` (plus the tag variable when `tag` is set), runs in `cwd`,
    reads `stdin_path` (or /dev/null) and writes `stdout_path` / `stderr_path` (created or
    truncated, mode 0600). The shim writes ``proc.json`` and ``status.json`` into `dir`.
    `argv[0]` without a slash is looked up in `env`'s PATH. All paths must be absolute.
    `tag` = (NAME, VALUE) marks every process of the tree through its environment; the
    pgroup containment finds escapees by it. AUTO containment is resolved by the client.
    The cgroup containment also gives every tree a pid namespace where the machine allows it,
    with a keeper as its init (see `ChildInfo.keeper`). `user` = (uid, gid): run the tree as
    that unprivileged user, with no supplementary groups (the shim runs as root).
    `open_stdin`: stdin is a pipe whose write end the shim holds (see `Supervisor.send_input`),
    instead of `stdin_path`. `tty` = (rows, cols): the tree runs on a pseudo-terminal whose master
    the shim holds: it is the leader's stdin, stdout, stderr and controlling terminal, and what
    the tree writes to it goes to `stdout_path` (`stderr_path` stays empty); input goes to it
    like `open_stdin`'s. `claim_socket` (a pre-started leader only, named ``warm-...``): stdin
    is a Unix socket whose other end the shim holds; a claim sends its stdio over it
    (`sandbox._warmbox`), for a tree that runs as another user than the shim's.
    """

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str
    dir: str
    stdout_path: str
    stderr_path: str
    stdin_path: str | None = None
    limits: Limits = field(default_factory=Limits)
    containment: Containment = Containment.AUTO
    tag: tuple[str, str] | None = None
    user: tuple[int, int] | None = None
    open_stdin: bool = False
    tty: tuple[int, int] | None = None
    claim_socket: bool = False

    def __post_init__(self) -> None:
        validate_name(self.name)
        if self.tty is not None:
            object.__setattr__(self, "tty", (int(self.tty[0]), int(self.tty[1])))
            if not all(1 <= n <= 65535 for n in self.tty):
                raise ValueError(f"tty must be (rows, cols) of 1 to 65535, got {self.tty!r}")
        if self.claim_socket and (not self.name.startswith(WARM_PREFIX) or self.open_stdin or self.tty):
            raise ValueError(
                "claim_socket is for a pre-started leader (warm-...) without a stdin or terminal"
            )
        if self.user is not None:
            object.__setattr__(self, "user", (int(self.user[0]), int(self.user[1])))
            if min(self.user) <= 0:
                raise ValueError(f"user must be an unprivileged (uid, gid), got {self.user!r}")
        # Copies, so that a caller mutating its own list or dict cannot change a frozen spec.
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "env", dict(self.env))
        object.__setattr__(self, "containment", Containment(self.containment))
        if not isinstance(self.limits, Limits):
            raise ValueError(f"limits must be a Limits, got {self.limits!r}")
        if not self.argv or not all(isinstance(a, str) and "\0" not in a for a in self.argv):
            raise ValueError("argv must be a non-empty sequence of strings without NUL")
        for key, value in self.env.items():
            _check_env("env", key, value)
        if self.tag is not None:
            object.__setattr__(self, "tag", tuple(self.tag))
            _check_env("tag", *self.tag)
        for what in ("cwd", "dir", "stdout_path", "stderr_path"):
            _check_path(what, getattr(self, what))
        if self.stdin_path is not None:
            _check_path("stdin_path", self.stdin_path)

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-able dict."""
        return {
            "name": self.name,
            "argv": list(self.argv),
            "env": dict(self.env),
            "cwd": self.cwd,
            "dir": self.dir,
            "stdoutPath": self.stdout_path,
            "stderrPath": self.stderr_path,
            "stdinPath": self.stdin_path,
            "limits": self.limits.to_dict(),
            "containment": str(self.containment),
            "tag": list(self.tag) if self.tag else None,
            "user": list(self.user) if self.user else None,
            "openStdin": self.open_stdin,
            "tty": list(self.tty) if self.tty else None,
            "claimSocket": self.claim_socket,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SpawnSpec:
        """Rebuild a spec from `to_dict()` output; raises ValueError, KeyError or TypeError."""
        tag = data.get("tag")
        return cls(
            name=data["name"],
            argv=tuple(data["argv"]),
            env=dict(data["env"]),
            cwd=data["cwd"],
            dir=data["dir"],
            stdout_path=data["stdoutPath"],
            stderr_path=data["stderrPath"],
            stdin_path=data.get("stdinPath"),
            limits=Limits.from_dict(data.get("limits") or {}),
            containment=Containment(data.get("containment", "auto")),
            tag=(str(tag[0]), str(tag[1])) if tag else None,
            user=(int(user[0]), int(user[1])) if (user := data.get("user")) else None,
            open_stdin=bool(data.get("openStdin", False)),
            tty=(int(tty[0]), int(tty[1])) if (tty := data.get("tty")) else None,
            claim_socket=bool(data.get("claimSocket", False)),
        )


def _check_env(what: str, key: str, value: str) -> None:
    if not isinstance(key, str) or not key or "=" in key or "\0" in key:
        raise ValueError(f"{what}: invalid variable name {key!r}")
    if not isinstance(value, str) or "\0" in value:
        raise ValueError(f"{what}: the value of {key} must be a string without NUL")


@dataclass(frozen=True)
class ChildInfo:
    """The identity of a started execution: enough to find, adopt and kill its tree later.

    `pid` and `start_time` (field 22 of /proc/PID/stat) identify the leader (a reused pid has
    another start time); with pidns it is the namespace's init. The cgroup fields are the
    absolute cgroupfs directories made for the execution, or None. `tag` is the spec's tag
    (the pgroup containment finds escapees by it, also after adoption).
    """

    name: str
    pid: int
    start_time: int
    containment: Containment
    dir: str
    cgroup: str | None = None  # cgroup v2 directory (containment and/or v2 limits)
    memory_cgroup: str | None = None  # cgroup v1 memory directory
    pids_cgroup: str | None = None  # cgroup v1 pids directory
    tag: tuple[str, str] | None = None
    #: The tree has a pid namespace of its own: always for ``pidns`` (the leader is its init),
    #: and for ``cgroup`` where the machine allows it (with a `keeper` as its init), so that a
    #: process that leaves the cgroup still dies with the tree.
    pidns: bool = False
    #: (pid, start time) of the keeper: the idle init of the tree's pid namespace (``cgroup``).
    keeper: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The identity as a JSON-able dict (the content of ``proc.json``)."""
        return {
            "name": self.name,
            "pid": self.pid,
            "startTime": self.start_time,
            "containment": str(self.containment),
            "dir": self.dir,
            "cgroup": self.cgroup,
            "memoryCgroup": self.memory_cgroup,
            "pidsCgroup": self.pids_cgroup,
            "tag": list(self.tag) if self.tag else None,
            "pidns": self.pidns,
            "keeper": list(self.keeper) if self.keeper else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChildInfo:
        """Rebuild an identity from `to_dict()` output."""
        return cls(
            name=validate_name(data["name"]),
            pid=int(data["pid"]),
            start_time=int(data["startTime"]),
            containment=Containment(data["containment"]),
            dir=str(data["dir"]),
            cgroup=data.get("cgroup"),
            memory_cgroup=data.get("memoryCgroup"),
            pids_cgroup=data.get("pidsCgroup"),
            tag=(str(tag[0]), str(tag[1])) if (tag := data.get("tag")) else None,
            pidns=bool(data.get("pidns", data["containment"] == "pidns")),
            keeper=(int(keeper[0]), int(keeper[1])) if (keeper := data.get("keeper")) else None,
        )


@dataclass(frozen=True)
class ExitStatus:
    """How the leader ended.

    Exactly one of `exit_code` and `signal` is set, or neither when the outcome cannot be known
    (a tree adopted after the shim that started it died). `limit` names the limit that killed
    it (``oom``, ``cpu_limit``, ``file_size_limit``) when one did. `memory_peak_bytes` and
    `oom_kills` describe the whole tree where a memory cgroup measured it (`memory_peak_bytes`
    is else the leader's peak resident size, its waited-for children's included).
    `cpu_user_ms` and `cpu_system_ms` are the tree's CPU time from its cgroup where it has
    one, else the leader's and its waited-for children's (None where not measured).
    """

    exit_code: int | None
    signal: int | None
    limit: str | None = None
    # Measurements, not how it ended: two statuses of one outcome compare equal.
    memory_peak_bytes: int | None = field(default=None, compare=False)
    oom_kills: int | None = None
    cpu_user_ms: int | None = field(default=None, compare=False)
    cpu_system_ms: int | None = field(default=None, compare=False)

    @property
    def known(self) -> bool:
        """Whether the outcome is known."""
        return self.exit_code is not None or self.signal is not None

    @classmethod
    def from_wait_status(cls, status: int) -> ExitStatus:
        """The status of a waitpid() status word (no limit information)."""
        code = os.waitstatus_to_exitcode(status)
        return cls(exit_code=code, signal=None) if code >= 0 else cls(exit_code=None, signal=-code)

    def to_dict(self) -> dict[str, Any]:
        """The status as a JSON-able dict."""
        return {
            "exitCode": self.exit_code,
            "signal": self.signal,
            "limit": self.limit,
            "memoryPeakBytes": self.memory_peak_bytes,
            "oomKills": self.oom_kills,
            "cpuUserMs": self.cpu_user_ms,
            "cpuSystemMs": self.cpu_system_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExitStatus:
        """Rebuild a status from `to_dict()` output (extra keys are ignored)."""
        return cls(
            exit_code=data.get("exitCode"),
            signal=data.get("signal"),
            limit=data.get("limit"),
            memory_peak_bytes=data.get("memoryPeakBytes"),
            oom_kills=data.get("oomKills"),
            cpu_user_ms=data.get("cpuUserMs"),
            cpu_system_ms=data.get("cpuSystemMs"),
        )


#: The status of a leader whose outcome cannot be known.
UNKNOWN_EXIT = ExitStatus(exit_code=None, signal=None)


@dataclass(frozen=True)
class KnownChild:
    """What the shim holds about one execution."""

    info: ChildInfo
    status: ExitStatus | None  # None while the leader runs
    empty: bool  # nothing of the tree is alive (judged by the containment)

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-able dict."""
        return {
            "info": self.info.to_dict(),
            "status": self.status.to_dict() if self.status else None,
            "empty": self.empty,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KnownChild:
        """Rebuild a record from `to_dict()` output."""
        status = data.get("status")
        return cls(
            info=ChildInfo.from_dict(data["info"]),
            status=ExitStatus.from_dict(status) if status else None,
            empty=bool(data["empty"]),
        )
