"""Finding the processes a test started (execution trees and supervisors), to prove none is left."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, tty_nr,
    tpgid, ...: proc(5)); empty if there is no such process."""
    stat = _read(f"/proc/{pid}/stat")
    end = stat.rfind(b")")
    return [] if end < 0 else stat[end + 2 :].split()


def _zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return not fields or fields[0][:1] in (b"Z", b"X")


def processes_mentioning(marker: str) -> list[int]:
    """Live processes whose command line or environment mentions `marker`."""
    needle = marker.encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == me:
            continue
        mentions = needle in _read(f"/proc/{pid}/cmdline") or needle in _read(f"/proc/{pid}/environ")
        if mentions and not _zombie(pid):
            found.append(pid)
    return found


def workbench_processes(root: Path, settle_s: float = 3.0) -> list[int]:
    """Processes of executions and supervisors under `root`, after letting exiting ones finish."""
    deadline = time.monotonic() + settle_s
    while True:
        found = processes_mentioning(str(root))
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def describe(pids: list[int]) -> str:
    parts = []
    for pid in pids:
        cmd = _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip()
        parts.append(f"{pid} ({cmd[:120]})")
    return ", ".join(parts)


def kill(pid: int) -> None:
    """SIGKILL `pid` if it still exists."""
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def kill_and_reap_wait(pids: list[int], within_s: float = 10.0) -> None:
    """SIGKILL `pids` and wait until none is alive (a tree that ended, not one that is ending)."""
    for pid in pids:
        kill(pid)
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still alive after SIGKILL: {[p for p in pids if alive(p)]}"
        time.sleep(0.01)


def alive(pid: int) -> bool:
    """True if `pid` names a process that is not a zombie."""
    return os.path.exists(f"/proc/{pid}") and not _zombie(pid)


async def eventually(predicate: Callable[[], bool], within_s: float = 30.0) -> None:
    """Wait until `predicate()` holds: for what a child process does, which nothing announces."""
    with trio.fail_after(within_s):
        while not predicate():  # noqa: ASYNC110 - the condition is another process's file or state
            await trio.sleep(0.02)


def in_foreground(argv: list[str]) -> bool:
    """True once a process running `argv` is its terminal's foreground process group (a shell
    has forked the job and handed it the terminal: a signal to that group now reaches it)."""
    wanted = "\0".join(argv).encode() + b"\0"
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _read(f"/proc/{entry}/cmdline") == wanted:
            fields = _stat_fields(int(entry))  # its pgrp is fields[2], its terminal's tpgid [5]
            if len(fields) > 5 and int(fields[5]) > 0 and fields[2] == fields[5]:
                return True
    return False


def containment_params() -> list[Any]:
    """Every containment mechanism as a pytest parameter, skipped (with the reason) where absent."""
    import pytest

    import sandbox

    caps = sandbox.detect()
    return [
        pytest.param(
            c.value,
            marks=pytest.mark.skipif(not caps.available(c), reason=caps.reasons.get(c.value, "unavailable")),
        )
        for c in (sandbox.Containment.CGROUP, sandbox.Containment.PIDNS, sandbox.Containment.PGROUP)
    ]


#: A shell line that sets `me` to the shell's own pid in a form `host_pid` finds on the host:
#: "pid:[NS] PID". Inside a tree's pid namespace `$$` and /proc/self (its own /proc) give the
#: pid there, which means nothing to the host.
SHELL_ME = 'read -r me _ < /proc/self/stat; me="$(readlink /proc/self/ns/pid) $me"'
#: The same as a Python expression (needs `os` imported).
PYTHON_ME = 'os.readlink("/proc/self/ns/pid") + " " + open("/proc/self/stat").read().split()[0]'


def host_pid(recorded: str) -> int:
    """The host's pid of the live process that recorded `recorded` (`SHELL_ME`, `PYTHON_ME`).

    Raises:
        LookupError: no live process matches (it is gone).
    """
    namespace, _, pid = recorded.strip().rpartition(" ")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                continue
        except OSError:
            continue
        # The pid there (a tree's own /proc), or the host's (a pid namespace that sees the host's).
        for line in _read(f"/proc/{entry}/status").splitlines():
            named = entry == pid or line.split()[-1:] == [pid.encode()]
            if line.startswith(b"NSpid:") and named and not _zombie(int(entry)):
                return int(entry)
    raise LookupError(f"no live process recorded {recorded.strip()!r}")
