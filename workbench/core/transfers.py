"""Moving whole trees in and out of a workspace: `files:upload` (a tar or zip, unpacked) and
`files:download` (a tar of a directory, streamed as it is written).

The download's tar is written by a worker thread into a channel the response reads: the thread
waits whenever the client is slower than the disk, and stops when the client goes away. It walks
the tree by descriptors, never following a symlink (a symlink goes into the tar as one) or
crossing a mount; fifos, sockets and devices are left out.
"""

from __future__ import annotations

import os
import stat
import tarfile
import uuid
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import trio

from workbench.core import archives, beneath
from workbench.core.beneath import Parts, closing
from workbench.core.files import Files
from workbench.core.writing import is_temp
from workbench.wire.errors import PayloadTooLarge
from workbench.wire.files import UploadResult

_CHUNK = 256 * 1024


class Transfers:
    """Uploads and downloads of trees, for a principal's sessions."""

    def __init__(self, files: Files) -> None:
        self.files = files
        self.workspaces = files.workspaces

    async def upload(
        self, principal: str, session_id: str, path: str, body: AsyncIterator[bytes], length: int | None
    ) -> UploadResult:
        """Unpack the archive `body` under `path` (made if missing); what it held."""
        base = beneath.parse(path)
        limit = self.workspaces.settings.max_file_bytes
        if length is not None and length > limit:
            raise PayloadTooLarge(f"the archive is {length} bytes; at most {limit}")
        workspace = self.workspaces.path(principal, session_id)
        # Counted as a write under way: a removal of the session waits for it, and it for one.
        async with self.workspaces.writing(workspace):
            room = await self.workspaces.room(workspace)
            spool = self.workspaces.layout.spool_dir
            await trio.to_thread.run_sync(lambda: spool.mkdir(mode=0o700, exist_ok=True))
            spooled = spool / f"upload-{uuid.uuid4().hex}"
            try:
                await _spool(spooled, body, limit)
                archive = await trio.to_thread.run_sync(archives.read_members, str(spooled), base, limit)
                try:
                    async with self.workspaces.locked(workspace):
                        result, replaced = await trio.to_thread.run_sync(
                            self._unpack, workspace, base, archive, room, limit
                        )
                finally:
                    archive.close()
            finally:
                spooled.unlink(missing_ok=True)
            self.workspaces.grew(workspace, result.size_bytes - replaced)
            return result.model_copy(update={"path": beneath.join(base)})

    def _unpack(
        self, workspace: Path, base: Parts, archive: archives.Archive, room: int, limit: int
    ) -> tuple[UploadResult, int]:
        replaced = 0
        if workspace.is_dir():
            with closing(self.workspaces.open_root(workspace, make=False)) as root:
                replaced = archives.check_targets(root, archive.members)
        total = sum(m.size for m in archive.members)
        if total - replaced > room:
            raise self.workspaces.quota_error(total)
        # Checked whole: only now is anything made (the session's workspace too, on first use).
        with closing(self.workspaces.open_root(workspace, make=True)) as root:
            beneath.make_dirs(root, base)
            return archives.unpack(root, archive, limit), replaced

    async def download(self, principal: str, session_id: str, path: str) -> tuple[str, AsyncIterator[bytes]]:
        """(a file name for it, the tar's bytes) of the directory or file at `path`.

        The path is checked (404, 422) before the first byte, so a refusal is a JSON error.
        """
        parts = beneath.parse(path)
        workspace = self.workspaces.existing(principal, session_id)

        def open_top() -> int:
            with closing(self.workspaces.open_root(workspace, make=False)) as root:
                return beneath.open_beneath(root, parts, os.O_PATH)

        top = await trio.to_thread.run_sync(open_top)
        name = (parts[-1] if parts else session_id) + ".tar"
        return name, _stream(top, parts[-1] if parts else "")


async def _spool(path: Path, body: AsyncIterator[bytes], limit: int) -> None:
    fd = await trio.to_thread.run_sync(lambda: os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        size, pending = 0, bytearray()
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"the archive is larger than {limit} bytes")
            pending += chunk
            if len(pending) >= 1024 * 1024:
                data, pending = bytes(pending), bytearray()
                await trio.to_thread.run_sync(_write, fd, data)
        if pending:
            await trio.to_thread.run_sync(_write, fd, bytes(pending))
    finally:
        os.close(fd)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Exact:
    """A file's bytes, exactly `size` of them (zeros past an end that moved in the meantime)."""

    def __init__(self, fd: int, size: int) -> None:
        self._fd, self._left = fd, size

    def read(self, n: int) -> bytes:
        want = min(n, self._left)
        data = os.read(self._fd, want) if want else b""
        if len(data) < want:
            data += bytes(want - len(data))
        self._left -= len(data)
        return data


async def _stream(top: int, name: str) -> AsyncIterator[bytes]:
    """The tar's bytes: written in worker threads, one chunk per step, as the client reads."""
    chunks = _chunked(_tar(top, name))
    try:
        while (chunk := await trio.to_thread.run_sync(next, chunks, None)) is not None:
            yield chunk
    finally:
        chunks.close()  # its descriptors are closed by its own `finally`s


def _chunked(pieces: Iterator[bytes]) -> Generator[bytes, None, None]:
    buffer = bytearray()
    try:
        for piece in pieces:
            buffer += piece
            if len(buffer) >= _CHUNK:
                yield bytes(buffer)
                buffer.clear()
        if buffer:
            yield bytes(buffer)
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()


def _tar(top: int, name: str) -> Generator[bytes, None, None]:
    """A tar (POSIX pax) of the directory or file `top` (an `O_PATH` descriptor; closed here)."""
    try:
        st = os.fstat(top)
        if stat.S_ISDIR(st.st_mode):
            with closing(beneath.reopen(top, os.O_RDONLY | os.O_DIRECTORY)) as fd:
                yield from _tree(fd, "", st.st_dev)
        else:
            yield from _entry(top, None, name or "file", st)
        end = 2 * tarfile.BLOCKSIZE
        yield bytes(end + (-end % tarfile.RECORDSIZE))
    finally:
        os.close(top)


def _tree(fd: int, prefix: str, device: int) -> Iterator[bytes]:
    for item in sorted(os.scandir(fd), key=lambda e: e.name):
        if is_temp(item.name):
            continue
        try:
            st = os.stat(item.name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        member = prefix + item.name
        yield from _entry(fd, item.name, member, st)
        if not stat.S_ISDIR(st.st_mode) or st.st_dev != device:
            continue  # a mount point is listed, not entered
        try:
            sub = os.open(item.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            continue
        with closing(sub):
            yield from _tree(sub, member + "/", device)


def _entry(fd: int, name: str | None, member: str, st: os.stat_result) -> Iterator[bytes]:
    """One member; `name` inside the directory `fd`, or None when `fd` is the (regular) file."""
    info = tarfile.TarInfo(member)
    info.mtime, info.mode = int(st.st_mtime), stat.S_IMODE(st.st_mode)
    info.uid, info.gid = st.st_uid, st.st_gid
    if stat.S_ISDIR(st.st_mode):
        info.type = tarfile.DIRTYPE
        yield info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    elif stat.S_ISLNK(st.st_mode):
        assert name is not None
        info.type, info.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=fd)
        yield info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    elif stat.S_ISREG(st.st_mode):
        handle = _open_file(fd, name)
        if handle is None:
            return
        with closing(handle):
            info.size = os.fstat(handle).st_size
            yield info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
            source = _Exact(handle, info.size)
            while block := source.read(_CHUNK):
                yield block
            yield bytes(-info.size % tarfile.BLOCKSIZE)


def _open_file(fd: int, name: str | None) -> int | None:
    """A read descriptor of a regular file (None if it is no longer one): never a fifo or device."""
    try:
        if name is None:
            return beneath.reopen(fd, os.O_RDONLY)
        with closing(os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)) as path_fd:
            if not stat.S_ISREG(os.fstat(path_fd).st_mode):
                return None
            return beneath.reopen(path_fd, os.O_RDONLY)
    except OSError:
        return None
