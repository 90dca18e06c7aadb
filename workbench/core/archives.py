"""Unpacking an uploaded tar or zip into a workspace, checked whole before anything is written.

The archive is spooled outside the workspace first (`Layout.spool_dir`), then read once to list
its members: every name must be a relative path without `..`, every member a file, a directory,
a symlink whose target stays inside, or (tar) a hard link to another member; each file at most
`WORKBENCH_MAX_FILE_BYTES`, all of them within the quota, and nothing in the workspace in the
way (a file where a directory goes, a symlink leading out). Only then is it unpacked, each file
written like a PUT (a temporary file renamed into place), under the workspace's lock.
"""

from __future__ import annotations

import os
import posixpath
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from typing import IO

from workbench.core import beneath
from workbench.core.beneath import Parts, closing
from workbench.core.writing import temp_name, write_all
from workbench.wire.errors import Conflict, InvalidRequest, NotFound, PayloadTooLarge
from workbench.wire.files import UploadResult

#: The most members one archive may hold.
MAX_MEMBERS = 100_000
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Member:
    parts: Parts
    kind: str  # "file", "directory", "symlink", "hardlink"
    size: int = 0
    mode: int = 0o644
    mtime: float | None = None
    link: str | None = None  # a symlink's target; a hard link's member path
    #: The archive's own entry (a TarInfo or ZipInfo) of a file.
    entry: tarfile.TarInfo | zipfile.ZipInfo | None = None


class Archive:
    """An archive opened for unpacking: its members, and a way to read a file member."""

    def __init__(self, handle: tarfile.TarFile | zipfile.ZipFile, members: list[Member]) -> None:
        self._handle, self.members = handle, members

    def open(self, member: Member) -> IO[bytes]:
        entry = member.entry
        if isinstance(entry, zipfile.ZipInfo) and isinstance(self._handle, zipfile.ZipFile):
            return self._handle.open(entry)
        assert isinstance(entry, tarfile.TarInfo) and isinstance(self._handle, tarfile.TarFile)
        source = self._handle.extractfile(entry)
        assert source is not None
        return source

    def close(self) -> None:
        self._handle.close()


def _refuse(message: str) -> InvalidRequest:
    return InvalidRequest(f"archive: {message}", details=[{"field": "archive", "message": message}])


def _parts(name: str) -> Parts:
    try:
        return beneath.parse(name, "archive")
    except InvalidRequest as exc:
        raise _refuse(f"member {name[:200]!r}: {exc.details[0]['message']}") from None


def _first_line(exc: BaseException) -> str:
    """What went wrong, on one line: tarfile lists each compression it tried on lines of their own."""
    text = str(exc).strip()
    if "could not be opened successfully" in text:
        return "neither a zip nor a tar, plain or compressed with gzip, bzip2 or xz"
    return text.splitlines()[0].rstrip(":") if text else type(exc).__name__


def _check_symlink(parts: Parts, target: str) -> None:
    """A symlink member must point inside the workspace, seen from where it is."""
    if not target or target.startswith("/") or "\x00" in target:
        raise _refuse(f"symlink {beneath.join(parts)!r} points to {target[:200]!r}, outside the workspace")
    joined = posixpath.normpath(posixpath.join(*parts[:-1], target) if parts[:-1] else target)
    if joined == ".." or joined.startswith("../"):
        raise _refuse(f"symlink {beneath.join(parts)!r} points to {target[:200]!r}, outside the workspace")


def read_members(path: str, base: Parts, limit: int) -> Archive:
    """The archive at `path` with its members placed under `base` (close it when done)."""
    with open(path, "rb") as f:
        magic = f.read(4)
    handle: tarfile.TarFile | zipfile.ZipFile | None = None
    try:
        if magic in (b"PK\x03\x04", b"PK\x05\x06"):
            handle = zipfile.ZipFile(path)
            members = _zip_members(handle, base)
        else:
            handle = tarfile.open(path, mode="r:*")  # noqa: SIM115 - closed by Archive.close
            members = _tar_members(handle, base)
        if len(members) > MAX_MEMBERS:
            raise _refuse(f"more than {MAX_MEMBERS} members")
        _check_shape(members)
        for member in members:
            if member.size > limit:
                shown = beneath.join(member.parts)
                raise PayloadTooLarge(f"archive member {shown!r} is {member.size} bytes; at most {limit}")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        if handle is not None:
            handle.close()
        raise _refuse(f"not a tar or zip archive that can be read ({_first_line(exc)})") from None
    except BaseException:
        if handle is not None:
            handle.close()
        raise
    return Archive(handle, members)


def _check_shape(members: list[Member]) -> None:
    """Within the archive: nothing is both a directory and something else, and a hard link names
    a file that comes before it."""
    leaves: set[Parts] = set()
    prefixes: set[Parts] = set()
    for member in members:
        prefixes.update(member.parts[:depth] for depth in range(1, len(member.parts)))
        if member.kind == "hardlink":
            assert member.link is not None
            if beneath.parse(member.link, "archive") not in leaves:
                raise _refuse(
                    f"hard link {beneath.join(member.parts)!r} names {member.link!r}, no file before it"
                )
        if member.kind != "directory":
            leaves.add(member.parts)
    clash = sorted(leaves & prefixes)
    if clash:
        raise _refuse(f"{beneath.join(clash[0])!r} is both a directory and a file or symlink")


def _tar_members(archive: tarfile.TarFile, base: Parts) -> list[Member]:
    out = []
    for info in archive.getmembers():
        own = _parts(info.name)
        if not own:
            continue  # the archive's own top directory (`./`)
        parts = (*base, *own)
        mode = info.mode & 0o777
        if info.isdir():
            out.append(Member(parts, "directory", mode=mode or 0o755, mtime=info.mtime))
        elif info.isreg():
            out.append(Member(parts, "file", info.size, mode, info.mtime, entry=info))
        elif info.issym():
            _check_symlink(parts, info.linkname)
            out.append(Member(parts, "symlink", link=info.linkname))
        elif info.islnk():
            out.append(Member(parts, "hardlink", link=beneath.join((*base, *_parts(info.linkname)))))
        else:
            raise _refuse(f"member {info.name[:200]!r} is a device or a fifo, which is not unpacked")
    return out


def _zip_members(archive: zipfile.ZipFile, base: Parts) -> list[Member]:
    out = []
    for info in archive.infolist():
        own = _parts(info.filename)
        if not own:
            continue
        parts = (*base, *own)
        if info.flag_bits & 0x1:
            raise _refuse(f"member {info.filename[:200]!r} is encrypted")
        mode = (info.external_attr >> 16) & 0xFFFF
        mtime = None
        if info.is_dir():
            out.append(Member(parts, "directory", mode=(mode & 0o777) or 0o755, mtime=mtime))
        elif stat.S_ISLNK(mode):
            target = archive.read(info).decode("utf-8", "replace")
            _check_symlink(parts, target)
            out.append(Member(parts, "symlink", link=target))
        else:
            out.append(Member(parts, "file", info.file_size, (mode & 0o777) or 0o644, entry=info))
    return out


def check_targets(root: int, members: list[Member]) -> int:
    """Refuse what is in the way in the workspace; the bytes of files the archive replaces."""
    dirs: set[Parts] = set()
    for member in members:
        for depth in range(len(member.parts) - 1):
            dirs.add(member.parts[: depth + 1])
        if member.kind == "directory":
            dirs.add(member.parts)
    for parts in sorted(dirs, key=len):
        try:
            with closing(beneath.open_beneath(root, parts, os.O_PATH, field="archive")) as fd:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    raise Conflict(
                        f"archive: {beneath.join(parts)!r} is a file in the workspace, not a directory"
                    )
        except NotFound:
            pass
    replaced = 0
    for member in members:
        if member.kind == "directory":
            continue
        try:
            with closing(beneath.open_parent(root, member.parts, make=False, field="archive")) as parent:
                st = os.stat(member.parts[-1], dir_fd=parent, follow_symlinks=False)
        except (NotFound, FileNotFoundError):
            continue
        if stat.S_ISDIR(st.st_mode):
            raise Conflict(f"archive: {beneath.join(member.parts)!r} is a directory in the workspace")
        if stat.S_ISREG(st.st_mode):
            replaced += st.st_size
    return replaced


def unpack(root: int, archive: Archive, limit: int) -> UploadResult:
    """Write every member beneath `root` (checked already); what was written."""
    counts = {"file": 0, "directory": 0, "symlink": 0, "hardlink": 0}
    written = 0
    for member in archive.members:
        if member.kind == "directory":
            beneath.make_dirs(root, member.parts, "archive")
            counts["directory"] += 1
            continue
        with closing(beneath.open_parent(root, member.parts, make=True, field="archive")) as parent:
            tmp = temp_name()
            try:
                if member.kind == "file":
                    written += _write_member(parent, tmp, member, archive, limit)
                elif member.kind == "symlink":
                    assert member.link is not None
                    os.symlink(member.link, tmp, dir_fd=parent)
                    beneath.inherit_owner(parent, tmp)
                else:
                    _hard_link(root, parent, tmp, member)
                os.rename(tmp, member.parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=parent)
                except OSError:
                    pass
                raise
            counts[member.kind] += 1
    return UploadResult(
        path="",
        files=counts["file"] + counts["hardlink"],
        directories=counts["directory"],
        symlinks=counts["symlink"],
        size_bytes=written,
    )


def _write_member(parent: int, tmp: str, member: Member, archive: Archive, limit: int) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, member.mode, dir_fd=parent)
    beneath.inherit_owner(parent, fd=fd)
    written = 0
    try:
        with archive.open(member) as source:
            while block := source.read(_CHUNK):
                written += len(block)
                if written > max(member.size, 0) or written > limit:
                    raise PayloadTooLarge(
                        f"archive member {beneath.join(member.parts)!r} is larger than it says"
                    )
                write_all(fd, block)
        os.fchmod(fd, member.mode)  # the umask took bits off; setuid and setgid never come in
        if member.mtime is not None:
            os.utime(fd, (member.mtime, member.mtime))
    finally:
        os.close(fd)
    return written


def _hard_link(root: int, parent: int, tmp: str, member: Member) -> None:
    assert member.link is not None
    target = beneath.parse(member.link, "archive")
    with closing(beneath.open_parent(root, target, make=False, field="archive")) as holder:
        st = os.stat(target[-1], dir_fd=holder, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(f"hard link {beneath.join(member.parts)!r} names {member.link!r}, not a file")
        os.link(target[-1], tmp, src_dir_fd=holder, dst_dir_fd=parent, follow_symlinks=False)
