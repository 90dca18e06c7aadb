"""The wire shapes of a session's workspace: files, listings, moves, sessions and watch events.

Paths on the wire are relative to the session's workspace, `/`-separated, without `.` or `..`
(`src/app.py`); the workspace itself is `""`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workbench.wire.models import RequestModel, Timestamp, WireModel

FileType = Literal["file", "directory", "symlink", "other"]
FileEventType = Literal["created", "modified", "deleted", "overflow"]
#: The longest relative path the file routes take (PATH_MAX, NUL included).
MAX_FILE_PATH_BYTES = 4095
#: The longest name of one component of a path (the file systems' NAME_MAX).
MAX_FILE_NAME_BYTES = 255
#: The deepest listing `?depth=` may ask for.
MAX_LIST_DEPTH = 64
#: The most entries one listing holds (then `truncated` is true).
MAX_LIST_ENTRIES = 10_000


class FileEntry(WireModel):
    """One entry of a workspace."""

    path: str
    """Relative to the workspace (`src/app.py`)."""
    name: str
    """The last component of `path` (`""` for the workspace itself)."""
    type: FileType
    """`file`, `directory`, `symlink` (never followed) or `other` (a fifo, socket or device)."""
    size_bytes: int
    """The size of a file (of the link itself for a symlink; 0 for a directory)."""
    modified_at: Timestamp
    """The last modification time."""
    etag: str | None = None
    """The file's version, as `GET` sends it in `ETag` (files only)."""
    target: str | None = None
    """What a symlink points to, as written."""


class FileList(WireModel):
    """`GET .../files/{path}?list`: the path itself and what is under it, to `depth` levels."""

    path: str
    type: FileType
    entries: list[FileEntry]
    """Sorted by path; a file lists as itself."""
    truncated: bool = False
    """More entries than the most one listing holds (10000)."""


class MoveRequest(RequestModel):
    """`POST .../files:move`."""

    source: str = Field(alias="from", min_length=1, max_length=MAX_FILE_PATH_BYTES)
    """The path to move (a file, a symlink or a directory)."""
    destination: str = Field(alias="to", min_length=1, max_length=MAX_FILE_PATH_BYTES)
    """Where it goes; its parents are made."""
    overwrite: bool = False
    """Replace what is at `to` (a file or an empty directory); otherwise that is a `409`."""


class UploadResult(WireModel):
    """`POST .../files:upload`: what the archive held, unpacked."""

    path: str
    """Where it was unpacked."""
    files: int
    directories: int
    symlinks: int
    size_bytes: int
    """The bytes of the files written."""


class Session(WireModel):
    """A session of the principal: its workspace, and what holds its delete (its live executions
    and code contexts)."""

    session_id: str
    size_bytes: int
    """The bytes of the files in its workspace (what the quota counts)."""
    quota_bytes: int
    modified_at: Timestamp
    live_executions: int
    """Its executions that are queued or running."""
    live_contexts: int
    """Its code contexts that are live (not `dead`)."""


class SessionList(WireModel):
    sessions: list[Session]


class FileEvent(WireModel):
    """One change under a watched path (`GET .../files:watch`): not journaled, not replayed."""

    type: FileEventType
    """`created`, `modified`, `deleted`; `overflow` when changes were missed (list again)."""
    path: str
    """Relative to the workspace (`""` for an overflow)."""
    directory: bool = False
    """Whether it is (or was) a directory."""
    timestamp: Timestamp
