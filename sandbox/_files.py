"""The two files the shim leaves in an execution's directory, for recovery without the shim.

``proc.json`` (written before spawn() returns) is the ChildInfo; ``status.json`` (written when
the leader is reaped) is its ExitStatus plus the leader's pid and start time. Both are
replaced atomically (temporary file + rename), so a reader sees all of one or nothing.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ._model import ChildInfo, ExitStatus

PROC_FILE = "proc.json"
STATUS_FILE = "status.json"


def write_json_atomic(path: str, data: Any) -> None:
    """Replace `path` with `data` as JSON, atomically (mode 0600).

    No fsync: the files must survive a crash of the daemon or the shim, not of the machine,
    and an fsync per execution would dominate the spawn latency.
    """
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps(data, separators=(",", ":")).encode())
    finally:
        os.close(fd)
    os.rename(tmp, path)


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_status_file(directory: str, info: ChildInfo, status: ExitStatus) -> None:
    """Record the leader's exit in `directory`/status.json."""
    data = status.to_dict() | {"pid": info.pid, "startTime": info.start_time}
    write_json_atomic(os.path.join(directory, STATUS_FILE), data)


def read_status_file(directory: str, info: ChildInfo | None = None) -> ExitStatus | None:
    """The exit status recorded in `directory`, or None if none was (or it is unreadable).

    Args:
        directory: the execution's directory (SpawnSpec.dir).
        info: if given, a status recorded for another leader (pid and start time) is ignored.

    Returns:
        The recorded status, or None.
    """
    data = _read_json(os.path.join(directory, STATUS_FILE))
    if data is None:
        return None
    if info is not None and (data.get("pid"), data.get("startTime")) != (info.pid, info.start_time):
        return None
    return ExitStatus.from_dict(data)


def read_proc_file(directory: str) -> ChildInfo | None:
    """The identity recorded in `directory`/proc.json, or None if none was (or it is unreadable)."""
    data = _read_json(os.path.join(directory, PROC_FILE))
    if data is None:
        return None
    try:
        return ChildInfo.from_dict(data)
    except (KeyError, TypeError, ValueError):
        return None
