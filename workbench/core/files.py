"""The files of a session's workspace: read, write (atomically, compare-and-swap), delete, list, move.

Every path goes through `beneath` from the workspace's own descriptor, so none leads out of it.
A write streams the body into a temporary file beside its target (`.workbench-<hex>.part`) and
renames it into place (`writing`): a reader sees the old file or the new one, never a part.
`If-Match` and `If-None-Match` are checked under the workspace's lock just before the rename, so
two writers through the API cannot both win. Sizes are capped by `WORKBENCH_MAX_FILE_BYTES` and the
workspace's quota (`WORKBENCH_WORKSPACE_QUOTA_BYTES`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from workbench.core import beneath, writing
from workbench.core.beneath import Parts, closing
from workbench.core.records import format_time
from workbench.core.sessions import Workspaces
from workbench.wire.errors import Conflict, InvalidRequest, NotFound, PayloadTooLarge, PreconditionFailed
from workbench.wire.files import MAX_LIST_ENTRIES, FileEntry, FileList, MoveRequest

#: A file at most this big is read whole when it is opened (one thread hop, not two).
_READ_AT_ONCE = 1024 * 1024
_RENAME_NOREPLACE = 1
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Opened:
    """A file opened for reading: its descriptor (the caller closes it), size and version."""

    fd: int
    size: int
    etag: str
    name: str
    #: The whole file, read in the same trip to a worker thread, when it is small.
    data: bytes | None = None


def _ms(ns: int) -> str:
    return format_time(ns // 1_000_000) or ""


def entry_of(parts: Parts, st: os.stat_result, target: str | None = None) -> FileEntry:
    """The wire entry of a stat."""
    kind = beneath.kind_of(st.st_mode)
    return FileEntry(
        path=beneath.shown(beneath.join(parts)),
        name=beneath.shown(parts[-1]) if parts else "",
        type=kind,
        size_bytes=0 if kind == "directory" else st.st_size,
        modified_at=_ms(st.st_mtime_ns),
        etag=beneath.etag(st) if kind == "file" else None,
        target=None if target is None else beneath.shown(target),
    )


class Files:
    """The file operations of the API, for a principal's sessions."""

    def __init__(self, workspaces: Workspaces) -> None:
        self.workspaces = workspaces
        self.max_file_bytes = workspaces.settings.max_file_bytes

    # -- reading ----------------------------------------------------------------------------

    async def open(self, principal: str, session_id: str, path: str) -> Opened | None:
        """The regular file at `path`, opened; None for a directory; 404, or 422 (out, not a file)."""
        parts = beneath.parse(path)
        workspace = self.workspaces.existing(principal, session_id)

        # Resolving and opening are a few metadata calls, done here: a trip to a worker thread
        # costs more (up to milliseconds on a busy machine). Reading the bytes goes to one.
        with (
            closing(self.workspaces.open_root(workspace, make=False)) as root,
            closing(beneath.open_beneath(root, parts, os.O_PATH)) as handle,
        ):
            st = os.fstat(handle)
            if stat.S_ISDIR(st.st_mode):
                return None
            if not stat.S_ISREG(st.st_mode):
                raise beneath.not_regular(parts)
            fd = beneath.reopen(handle, os.O_RDONLY)
        opened = Opened(fd, st.st_size, beneath.etag(st), parts[-1] if parts else "")
        if st.st_size > _READ_AT_ONCE:
            return opened  # streamed
        try:
            data = _cached(fd, st.st_size + 1)
            if data is None:
                data = await trio.to_thread.run_sync(os.pread, fd, st.st_size + 1, 0)
        except BaseException:
            os.close(fd)
            raise
        # One byte more was asked for: a file that changed size since is streamed instead.
        return replace(opened, data=data) if len(data) == st.st_size else opened

    async def is_directory(self, principal: str, session_id: str, path: str) -> bool:
        """Whether `path` names a directory of the workspace (404 when it names nothing)."""
        parts = beneath.parse(path)
        workspace = self.workspaces.existing(principal, session_id)

        def work() -> bool:
            with (
                closing(self.workspaces.open_root(workspace, make=False)) as root,
                closing(beneath.open_beneath(root, parts, os.O_PATH)) as fd,
            ):
                return stat.S_ISDIR(os.fstat(fd).st_mode)

        return await trio.to_thread.run_sync(work)

    async def listing(self, principal: str, session_id: str, path: str, depth: int) -> FileList:
        """`path` and what is under it to `depth` levels, never following a symlink or a mount."""
        parts = beneath.parse(path)
        workspace = self.workspaces.existing(principal, session_id)

        def work() -> FileList:
            with (
                closing(self.workspaces.open_root(workspace, make=False)) as root,
                closing(beneath.open_beneath(root, parts, os.O_PATH)) as handle,
            ):
                st = os.fstat(handle)
                kind = beneath.kind_of(st.st_mode)
                if kind != "directory":
                    entry = entry_of(parts, st)
                    return FileList(path=entry.path, type=kind, entries=[entry])
                entries: list[FileEntry] = []
                if depth > 0:
                    with closing(beneath.reopen(handle, os.O_RDONLY | os.O_DIRECTORY)) as fd:
                        _walk(fd, parts, depth, st.st_dev, entries)
                entries.sort(key=lambda e: e.path)
                return FileList(
                    path=beneath.join(parts),
                    type="directory",
                    entries=entries[:MAX_LIST_ENTRIES],
                    truncated=len(entries) > MAX_LIST_ENTRIES,
                )

        return await trio.to_thread.run_sync(work)

    # -- writing ----------------------------------------------------------------------------

    async def write(
        self,
        principal: str,
        session_id: str,
        path: str,
        body: AsyncIterator[bytes],
        *,
        length: int | None,
        if_match: str | None = None,
        if_none_match: str | None = None,
    ) -> tuple[FileEntry, bool]:
        """Write `body` to `path` atomically (its parents made); (the new file's entry, created).

        413 over `WORKBENCH_MAX_FILE_BYTES`, 507 past the quota, 412 when `if_match` /
        `if_none_match` do not hold at the moment of the rename, 409 for a directory in the way,
        422 for a path that leads out. A refused write leaves the workspace as it was.
        """
        if path.endswith("/"):
            raise InvalidRequest(f"{path!r} ends with '/', which names a directory: name a file")
        parts = beneath.parse(path)
        if not parts:
            raise Conflict("the workspace itself is a directory: name a file inside it")
        limit = self.max_file_bytes
        if length is not None and length > limit:
            raise PayloadTooLarge(f"the file is {length} bytes; at most {limit} may be written")
        workspace = self.workspaces.path(principal, session_id)
        # A compare-and-swap names a file that exists: its parents are not made.
        make = if_match is None
        # Before the body: a few metadata calls, made here (a trip to a worker thread costs more),
        # once the workspace's size is known (measured in one when it must be). After the body,
        # one trip writes what is left (up to 1 MiB) and renames.
        async with self.workspaces.writing(workspace):
            await self.workspaces.used(workspace)
            ready = self._prepare(workspace, parts, length, make)
            parts, room = ready.parts, ready.room
            with closing(ready.root), closing(ready.parent):
                tmp = writing.temp_name()
                most, quota_error = min(limit, room), self.workspaces.quota_error
                fd, pending, written = await writing.spool(ready.parent, tmp, body, most, limit, quota_error)
                try:
                    async with self.workspaces.locked(workspace):
                        st, replaced, existed = await trio.to_thread.run_sync(
                            writing.commit, ready.parent, fd, pending, tmp, parts, if_match, if_none_match
                        )
                except BaseException:
                    writing.unlink_quietly(ready.parent, tmp)
                    raise
        self.workspaces.grew(workspace, written - replaced)
        return entry_of(parts, st), not existed

    def _prepare(self, workspace: Path, parts: Parts, length: int | None, make: bool) -> _Prepared:
        """Where the write lands (through a symlink that stays inside), the room the quota leaves
        it, and its workspace and parent opened (made, once the checks pass)."""
        exists = workspace.is_dir()
        replacing = 0
        if exists:
            with closing(self.workspaces.open_root(workspace, make=False)) as root:
                parts = beneath.follow_final(root, parts)
                replacing = _size_at(root, parts)
        room = self.workspaces.room_now(workspace, replacing)
        if length is not None and length > room:
            raise self.workspaces.quota_error(length)
        if not exists and not make:
            raise PreconditionFailed(f"{beneath.join(parts)[:200]!r} does not exist (If-Match)")
        root = self.workspaces.open_root(workspace, make=make)
        try:
            parent = beneath.open_parent(root, parts, make=make)
        except NotFound:
            os.close(root)
            raise PreconditionFailed(f"{beneath.join(parts)[:200]!r} does not exist (If-Match)") from None
        except BaseException:
            os.close(root)
            raise
        return _Prepared(parts, room, root, parent)

    # -- removing and moving ----------------------------------------------------------------

    async def delete(self, principal: str, session_id: str, path: str, if_match: str | None = None) -> None:
        """Remove a file, a symlink (not what it points to) or a whole directory."""
        parts = beneath.parse(path)
        if not parts:
            raise Conflict("the workspace itself is removed with DELETE /v1/sessions/{sessionId}")
        workspace = self.workspaces.existing(principal, session_id)

        def work() -> int | None:
            with (
                closing(self.workspaces.open_root(workspace, make=False)) as root,
                closing(beneath.open_parent(root, parts, make=False)) as parent,
            ):
                name = parts[-1]
                try:
                    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
                except FileNotFoundError:
                    raise NotFound(f"no file {beneath.join(parts)!r} in the workspace") from None
                current = beneath.etag(st) if stat.S_ISREG(st.st_mode) else None
                if if_match is not None and not writing.matches(if_match, current):
                    raise PreconditionFailed(f"{path[:200]!r} is not the version If-Match names")
                try:
                    if stat.S_ISDIR(st.st_mode):
                        beneath.remove_tree(parent, name)  # never following a symlink out
                        return None
                    os.unlink(name, dir_fd=parent)
                except OSError as exc:
                    raise beneath.translate(exc, parts) from None
                return st.st_size if stat.S_ISREG(st.st_mode) else 0

        async with self.workspaces.locked(workspace):
            freed = await trio.to_thread.run_sync(work)
        if freed is None:
            self.workspaces.forget(workspace)  # a tree went: measured again when next needed
        else:
            self.workspaces.grew(workspace, -freed)

    async def move(self, principal: str, session_id: str, req: MoveRequest) -> FileEntry:
        """Rename `from` to `to` inside the workspace (parents of `to` made); its new entry."""
        source = beneath.parse(req.source, "from")
        target = beneath.parse(req.destination, "to")
        if not source or not target:
            raise Conflict("the workspace itself cannot be moved")
        if target == source:
            raise Conflict(f"{beneath.join(source)[:200]!r} cannot be moved onto itself")
        if target[: len(source)] == source:
            raise Conflict("a directory cannot be moved inside itself")
        workspace = self.workspaces.existing(principal, session_id)

        def work() -> FileEntry:
            with (
                closing(self.workspaces.open_root(workspace, make=False)) as root,
                closing(beneath.open_parent(root, source, make=False, field="from")) as src,
            ):
                try:
                    os.stat(source[-1], dir_fd=src, follow_symlinks=False)
                except FileNotFoundError:
                    raise NotFound(f"no file {beneath.join(source)!r} in the workspace") from None
                with closing(beneath.open_parent(root, target, make=True, field="to")) as dst:
                    _rename(src, source[-1], dst, target[-1], overwrite=req.overwrite, parts=target)
                    st = os.stat(target[-1], dir_fd=dst, follow_symlinks=False)
                    return entry_of(target, st, _link_target(dst, target[-1], st))

        async with self.workspaces.locked(workspace):
            return await trio.to_thread.run_sync(work)


@dataclass(frozen=True)
class _Prepared:
    parts: Parts
    room: int
    root: int
    parent: int


def _size_at(root: int, parts: Parts) -> int:
    """The size of the regular file at `parts`, or 0 (nothing there yet, or not a file)."""
    try:
        with closing(beneath.open_parent(root, parts, make=False)) as parent:
            st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
    except (NotFound, FileNotFoundError, Conflict):
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _walk(fd: int, parts: Parts, depth: int, device: int, out: list[FileEntry]) -> None:
    """Entries under the directory `fd` into `out`, `depth` levels down (stops past the cap)."""
    for item in sorted(os.scandir(fd), key=lambda e: e.name):
        if len(out) > MAX_LIST_ENTRIES:
            return
        if writing.is_temp(item.name):
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        here = (*parts, item.name)
        out.append(entry_of(here, st, _link_target(fd, item.name, st)))
        if depth > 1 and stat.S_ISDIR(st.st_mode) and st.st_dev == device:
            try:
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                sub = os.open(item.name, flags, dir_fd=fd)
            except OSError:
                continue
            with closing(sub):
                _walk(sub, here, depth - 1, device, out)


def _link_target(parent: int, name: str, st: os.stat_result) -> str | None:
    """What the symlink `name` of `parent` (`st`, its own stat) points to; None for anything else."""
    if not stat.S_ISLNK(st.st_mode):
        return None
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError:
        return None


def _cached(fd: int, size: int) -> bytes | None:
    """The file's first `size` bytes if they are all in the page cache (read without blocking,
    `RWF_NOWAIT`); None when the disk would have to be read (or the kernel cannot tell)."""
    buffer = bytearray(size)
    try:
        got = os.preadv(fd, [buffer], 0, os.RWF_NOWAIT)
    except OSError:
        return None
    if got < size - 1:  # short: part of it is not cached (or the file shrank)
        return None
    return bytes(memoryview(buffer)[:got])


def _rename(src: int, old: str, dst: int, new: str, *, overwrite: bool, parts: Parts) -> None:
    """renameat2: with RENAME_NOREPLACE unless `overwrite` (then a file or an empty dir is replaced)."""
    if overwrite:
        try:
            os.rename(old, new, src_dir_fd=src, dst_dir_fd=dst)
        except OSError as exc:
            raise beneath.translate(exc, parts, "to") from None
        return
    result = _libc.renameat2(src, os.fsencode(old), dst, os.fsencode(new), _RENAME_NOREPLACE)
    if result != 0:
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise Conflict(f'{beneath.join(parts)!r} exists; pass "overwrite": true to replace it')
        raise beneath.translate(OSError(err, os.strerror(err)), parts, "to")
