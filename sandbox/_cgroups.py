"""Cgroup file-system plumbing for both layouts: pure v2, and hybrid (v2 beside v1 controllers).

Everything here works on absolute cgroupfs directories. Where the hierarchies are mounted
comes from /proc/self/mountinfo, and where this process sits in them from /proc/self/cgroup,
so nothing depends on one machine's paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import zlib
from dataclasses import dataclass

V2 = "v2"
V1 = "v1"


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy: where it is mounted, and which of its paths is mounted there."""

    mountpoint: str
    root: str


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo.
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def find_hierarchies(mountinfo: str) -> tuple[Hierarchy | None, dict[str, Hierarchy]]:
    """The cgroup v2 mount and the v1 mounts by controller name, from /proc/self/mountinfo text."""
    v2: Hierarchy | None = None
    v1: dict[str, Hierarchy] = {}
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        hierarchy = Hierarchy(mountpoint=_unescape(fields[4]), root=_unescape(fields[3]))
        if tail[0] == "cgroup2" and v2 is None:
            v2 = hierarchy
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                v1.setdefault(option, hierarchy)
    return v2, v1


def own_cgroups(proc_cgroup: str) -> tuple[str | None, dict[str, str]]:
    """This process's v2 cgroup path and its v1 paths by controller, from /proc/self/cgroup."""
    v2: str | None = None
    v1: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        else:
            for controller in parts[1].split(","):
                v1[controller] = parts[2]
    return v2, v1


def directory(hierarchy: Hierarchy, path: str) -> str | None:
    """The cgroupfs directory of cgroup `path`, or None if that mount does not show it."""
    root = hierarchy.root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return os.path.normpath(hierarchy.mountpoint + "/" + path[len(root) :])


def base_name(run_dir: str) -> str:
    """The name of the per-run-dir parent cgroup, so that two data dirs never share one."""
    # Two checksums (64 bits) rather than hashlib: OpenSSL would add megabytes to the shim,
    # and every fork it makes copies their page tables.
    path = os.path.realpath(run_dir).encode()
    return f"workbench-{zlib.crc32(path):08x}{zlib.adler32(path):08x}"


def read_file(path: str) -> str | None:
    """The content of a cgroup file, or None when it (or its cgroup) does not exist."""
    try:
        with open(path) as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENODEV:  # the cgroup was removed while open
            return None
        raise


def read_keyed(path: str) -> dict[str, int]:
    """A flat-keyed cgroup file (``key value`` lines) as a dict; empty when missing."""
    result: dict[str, int] = {}
    for line in (read_file(path) or "").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            result[key] = int(value)
    return result


def write_file(path: str, value: str) -> None:
    """Write `value` to a cgroup file (one write, as the kernel expects)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def make(path: str) -> None:
    """Create a cgroup directory (an existing one is an error: names must not be reused)."""
    os.mkdir(path, 0o755)


def ensure(path: str) -> None:
    """Create a cgroup directory if it does not exist."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o755)


def remove_tree(path: str) -> bool:
    """Remove a cgroup and the cgroups below it, deepest first; True if it is gone.

    A cgroup that still holds processes stays (EBUSY) and makes this return False.
    """
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return True
    ok = True
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            ok = remove_tree(entry.path) and ok
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return ok


def populated(path: str) -> bool | None:
    """Whether the v2 cgroup (or one below it) holds a process; None if it is gone."""
    events = read_file(os.path.join(path, "cgroup.events"))
    if events is None:
        return None
    for line in events.splitlines():
        if line.startswith("populated "):
            return line.split()[1] != "0"
    return None


#: A threaded cgroup has no cgroup.kill, and its cgroup.procs cannot be read (EOPNOTSUPP).
_THREADED_KILL_PASSES = 4


def kill(path: str) -> None:
    """SIGKILL every process of the v2 cgroup and of the cgroups below it.

    A domain cgroup's cgroup.kill does it at once. A threaded one (`make_threaded`) has none:
    it is frozen first, so that nothing in it can fork any more (a child born meanwhile is
    born frozen), then every process listed is killed, in a few passes (a frozen process dies
    of SIGKILL all the same). A child whose fork was under way then may be listed only after
    the last pass: it stays frozen, and dies with its tree's pid namespace, whose keeper is
    killed next (every tree in a threaded cgroup has one: `_tree_cgroups`).
    """
    try:
        write_file(os.path.join(path, "cgroup.kill"), "1")
        return
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
    with contextlib.suppress(FileNotFoundError):
        write_file(os.path.join(path, "cgroup.freeze"), "1")
    for _ in range(_THREADED_KILL_PASSES):
        pids = procs(path)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def procs(path: str) -> list[int]:
    """The pids in the cgroup and in the cgroups below it (a threaded cgroup's too), each once:
    a threaded domain lists every process with a thread in its subtree."""
    result: dict[int, None] = {}
    for top, dirs, _files in os.walk(path):
        result.update(dict.fromkeys(_own_procs(top)))
        dirs.sort()
    return list(result)


def _own_procs(directory: str) -> list[int]:
    try:
        text = read_file(os.path.join(directory, "cgroup.procs")) or ""
        return [int(pid) for pid in text.split()]
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
    # Threaded: cgroup.threads lists threads; their processes, each once, in order.
    seen: dict[int, None] = {}
    for tid in (read_file(os.path.join(directory, "cgroup.threads")) or "").split():
        tgid = _tgid(int(tid))
        if tgid is not None:
            seen.setdefault(tgid, None)
    return list(seen)


def _tgid(tid: int) -> int | None:
    try:
        status = read_file(f"/proc/{tid}/status")
    except OSError:  # it is exiting
        return None
    for line in (status or "").splitlines():
        if line.startswith("Tgid:"):
            return int(line.split()[1])
    return None


def make_threaded(path: str) -> None:
    """Turn the (new, empty) v2 cgroup `path` into a threaded one: its parent becomes the
    threaded domain of every such sibling, between which a thread moves by writing itself into
    cgroup.threads. Unlike a process's move (cgroup.procs), that move does not wait for the
    kernel's RCU grace period (milliseconds, when the machine was idle). Raises OSError."""
    write_file(os.path.join(path, "cgroup.type"), "threaded")


def join_file(kind: str, threaded: bool) -> str:
    """The file a thread writes "0" into to move itself alone into a cgroup of that hierarchy.

    v1 (``tasks``) and a threaded v2 cgroup (``cgroup.threads``) move only the calling thread,
    which needs no grace period; a domain v2 cgroup moves the whole process (``cgroup.procs``).
    The shim is single-threaded, and a child is born in the cgroup of the thread that forks it.
    """
    if kind == V1:
        return "tasks"
    return "cgroup.threads" if threaded else "cgroup.procs"


def set_memory_limit(kind: str, path: str, limit: int) -> None:
    """Cap the memory (and forbid swap where the kernel accounts it) of a cgroup."""
    if kind == V2:
        write_file(os.path.join(path, "memory.max"), str(limit))
        with contextlib.suppress(FileNotFoundError):  # no swap accounting
            write_file(os.path.join(path, "memory.swap.max"), "0")
    else:
        # memsw (memory + swap) must never be below the memory limit: set memory first.
        write_file(os.path.join(path, "memory.limit_in_bytes"), str(limit))
        with contextlib.suppress(FileNotFoundError):  # no swap accounting
            write_file(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit))


def set_pids_limit(path: str, limit: int) -> None:
    """Cap the number of tasks of a cgroup (v1 and v2 share the file)."""
    write_file(os.path.join(path, "pids.max"), str(limit))


def oom_kills(kind: str, path: str) -> int | None:
    """How many processes the OOM killer killed in the memory cgroup, or None if unknown."""
    if kind == V2:
        counters = read_keyed(os.path.join(path, "memory.events"))
    else:
        counters = read_keyed(os.path.join(path, "memory.oom_control"))
    return counters.get("oom_kill")


def memory_peak(kind: str, path: str) -> int | None:
    """The peak memory use of the memory cgroup in bytes, or None where not measured."""
    name = "memory.peak" if kind == V2 else "memory.max_usage_in_bytes"
    text = read_file(os.path.join(path, name))
    try:
        return int(text) if text else None
    except ValueError:
        return None


def cpu_times_ms(path: str) -> tuple[int, int] | None:
    """(user, system) CPU time in ms of every process that ran in the v2 cgroup, or None.

    `cpu.stat` is there in every v2 cgroup, whether or not the cpu controller is enabled.
    """
    stat = read_keyed(os.path.join(path, "cpu.stat"))
    if "user_usec" not in stat or "system_usec" not in stat:
        return None
    return stat["user_usec"] // 1000, stat["system_usec"] // 1000
