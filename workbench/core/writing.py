"""Writing one file of a workspace: the body streamed into a temporary file beside its target
(`.workbench-<hex>.part`), then the preconditions checked and the file renamed into place.

The temporary file sits in the workspace, where an execution may swap anything in for it while
the body comes in: after it is made, nothing is done to it by its name but the rename. Its owner
and mode are set through the write's own descriptor, and only the write's own file is renamed
into place (409 when the name holds something else). Every call here but `spool` blocks.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import AsyncIterator, Callable

import trio

from workbench.core import beneath
from workbench.core.beneath import Parts
from workbench.wire.errors import Conflict, PayloadTooLarge, PreconditionFailed, QuotaExceeded

#: Bytes gathered from the request before one write to the file (one thread hop per write).
_WRITE_AT = 1024 * 1024
#: The name of a write's temporary file; watchers leave these out.
TEMP_PREFIX, TEMP_SUFFIX = ".workbench-", ".part"
_TEMP_LENGTH = len(TEMP_PREFIX) + 16 + len(TEMP_SUFFIX)


def temp_name() -> str:
    return f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def is_temp(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX) and len(name) == _TEMP_LENGTH


def matches(header: str, current: str | None) -> bool:
    """Whether an `If-Match`-style header (`*` or a list of strong ETags) names `current`."""
    if current is None:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or current in tags


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def unlink_quietly(parent: int, name: str) -> None:
    """Remove the entry `name` of `parent` (never what a symlink there points to), if it is there."""
    try:
        os.unlink(name, dir_fd=parent)
    except OSError:
        pass


async def spool(
    parent: int,
    tmp: str,
    body: AsyncIterator[bytes],
    most: int,
    limit: int,
    quota_error: Callable[[int], QuotaExceeded],
) -> tuple[int, bytes, int]:
    """Stream `body` into a new file `tmp` in `parent`: (its descriptor, the last bytes not yet
    written, the size). Refused past `most` bytes (413 past `limit`, else `quota_error`), the file
    and `tmp` removed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o644, dir_fd=parent)
    written = 0
    pending: list[bytes] = []
    held = 0
    try:
        beneath.inherit_owner(parent, fd=fd)
        async for chunk in body:
            written += len(chunk)
            if written > most:
                if written > limit:
                    raise PayloadTooLarge(f"the file is larger than {limit} bytes")
                raise quota_error(written)
            pending.append(chunk)
            held += len(chunk)
            if held >= _WRITE_AT:
                await trio.to_thread.run_sync(write_all, fd, b"".join(pending))
                pending, held = [], 0
    except BaseException:
        os.close(fd)
        unlink_quietly(parent, tmp)
        raise
    return fd, b"".join(pending), written


def commit(
    parent: int,
    fd: int,
    pending: bytes,
    tmp: str,
    parts: Parts,
    if_match: str | None,
    if_none_match: str | None,
) -> tuple[os.stat_result, int, bool]:
    """Write the last bytes to `fd` (the file `spool` made as `tmp`), check the preconditions
    against what is at `parts` now, then rename it there; (its stat, bytes replaced, whether
    something was there). Closes `fd`."""
    try:
        write_all(fd, pending)
        return _replace(parent, fd, tmp, parts, if_match, if_none_match)
    finally:
        os.close(fd)


def _replace(
    parent: int, fd: int, tmp: str, parts: Parts, if_match: str | None, if_none_match: str | None
) -> tuple[os.stat_result, int, bool]:
    name = parts[-1]
    try:
        old: os.stat_result | None = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    current = beneath.etag(old) if old is not None and stat.S_ISREG(old.st_mode) else None
    shown = beneath.join(parts)[:200]
    if if_match is not None and not matches(if_match, current):
        raise PreconditionFailed(f"{shown!r} is not the version If-Match names (it is {current})")
    none_match = if_none_match is not None and (
        if_none_match.strip() == "*" or matches(if_none_match, current)
    )
    if old is not None and none_match:
        raise PreconditionFailed(f"{shown!r} exists (If-None-Match)")
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise Conflict(f"{beneath.join(parts)!r} is a directory")
    if old is not None and stat.S_ISREG(old.st_mode):
        # An executable stays executable; setuid, setgid (and sticky) never come over.
        os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)
    own = os.fstat(fd)
    _still_own(parent, tmp, own, parts)
    # What is at the name now (a fifo, a symlink swapped in meanwhile) is replaced itself:
    # nothing is ever written through it.
    os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not _same(st, own):  # swapped between the check and the rename
        raise _replaced(parts)
    replaced = old.st_size if old is not None and stat.S_ISREG(old.st_mode) else 0
    return st, replaced, old is not None


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _still_own(parent: int, tmp: str, own: os.stat_result, parts: Parts) -> None:
    """Refuse (409) when the name `tmp` in `parent` no longer holds the write's own file."""
    try:
        st = os.stat(tmp, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise _replaced(parts) from None
    if not _same(st, own):
        raise _replaced(parts)


def _replaced(parts: Parts) -> Conflict:
    shown = beneath.join(parts)[:200]
    return Conflict(f"{shown!r} was not written: its temporary file was replaced while the body came in")
