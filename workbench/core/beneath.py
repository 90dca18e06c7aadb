"""Opening paths beneath a directory without ever leaving it: the file routes' only way in.

A workspace is written by the executions that run in it, so anything in it may be a symlink
pointing out, a fifo, a device or a mount point put there a moment ago. Every path is resolved
with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)` from the workspace's
own descriptor: the kernel refuses any step out (`..` past the top, an absolute symlink, a link to
outside, a mount crossed) in the same call that resolves the path, so nothing can be swapped in
between a check and a use. Where the kernel has no `openat2` (before 5.6) each component is
opened in turn with `O_NOFOLLOW`, and a symlink anywhere is refused. Every call here blocks: run
it in a worker thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections.abc import Iterator

from workbench.wire.errors import Conflict, InvalidRequest, NotFound
from workbench.wire.files import MAX_FILE_NAME_BYTES as MAX_NAME_BYTES
from workbench.wire.files import MAX_FILE_PATH_BYTES, FileType

_SYS_OPENAT2 = 437  # the same number on every architecture that has it
_RESOLVE_NO_XDEV = 0x01
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS | _RESOLVE_NO_XDEV
_AT_SYMLINK_NOFOLLOW = 0x100
_AT_EMPTY_PATH = 0x1000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


#: None until probed; then whether the kernel has openat2.
_have_openat2: bool | None = None

Parts = tuple[str, ...]


def parse(path: str, field: str = "path") -> Parts:
    """The components of a workspace path (`""` is the workspace itself).

    `.` and empty components (`a//b`, a trailing `/`) are dropped. Refused with a 422 naming
    `field`, before anything is made: an absolute path, a `..` component, a NUL, a path over
    4095 bytes, a name (component) over 255.
    """
    if "\x00" in path:
        raise _invalid(field, "must not contain NUL")
    if len(path.encode("utf-8", "surrogateescape")) > MAX_FILE_PATH_BYTES:
        raise _invalid(field, f"must be at most {MAX_FILE_PATH_BYTES} bytes")
    if path.startswith("/"):
        raise _invalid(field, f"{path[:200]!r} is absolute: paths are relative to the workspace")
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if ".." in parts:
        raise _invalid(field, f"{path[:200]!r} has a '..' component: paths stay inside the workspace")
    for part in parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            shown = f"{path[:200]!r} has a name that is too long"
            raise _invalid(field, f"{shown} (at most {MAX_NAME_BYTES} bytes)")
    return parts


def join(parts: Parts) -> str:
    """`parts` as one path (what `openat2` takes; `shown` makes it fit for the wire)."""
    return "/".join(parts)


def shown(text: str) -> str:
    """A name or path read from the file system as the wire shows it: a name that is not UTF-8
    (`os.fsdecode` holds its bad bytes as lone surrogates, which no JSON text can carry) gets
    U+FFFD for each bad byte, as output does."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _invalid(field: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"{field} {message}", details=[{"field": field, "message": message}])


def escape_error(parts: Parts, field: str = "path") -> InvalidRequest:
    """The 422 of a path that would lead out of the workspace."""
    return _invalid(field, f"{join(parts)[:200]!r} leads out of the workspace (through a symlink or a mount)")


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int:
    # The kernel refuses a mode unless the call may create the file.
    creating = flags & os.O_CREAT or flags & os.O_TMPFILE == os.O_TMPFILE
    how = _OpenHow(flags | os.O_CLOEXEC, mode if creating else 0, _RESOLVE)
    while True:
        fd = _libc.syscall(_SYS_OPENAT2, dirfd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how))
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err not in (errno.EINTR, errno.EAGAIN):
            raise OSError(err, os.strerror(err), path)


def _walk_open(dirfd: int, parts: Parts, flags: int, mode: int) -> int:
    """The fallback: component by component, never following a symlink."""
    current = os.dup(dirfd)
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            step_flags = (flags if last else os.O_PATH | os.O_DIRECTORY) | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(name, step_flags, mode, dir_fd=current)
            except OSError as exc:
                # ENOTDIR for a symlink opened with O_DIRECTORY|O_NOFOLLOW: refuse it as one.
                if exc.errno == errno.ENOTDIR and stat.S_ISLNK(os.lstat(name, dir_fd=current).st_mode):
                    raise OSError(errno.ELOOP, "a symlink", name) from None
                raise
            if os.fstat(fd).st_dev != os.fstat(current).st_dev:
                os.close(fd)
                raise OSError(errno.EXDEV, "a mount point", name)
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                os.close(fd)
                raise OSError(errno.ELOOP, "a symlink", name)
            os.close(current)
            current = fd
        if not parts:
            fd = os.open(".", flags | os.O_CLOEXEC, mode, dir_fd=current)
            os.close(current)
            current = fd
        return current
    except BaseException:
        os.close(current)
        raise


def open_beneath(dirfd: int, parts: Parts, flags: int, mode: int = 0o644, field: str = "path") -> int:
    """A descriptor of `parts` beneath `dirfd`, opened with `flags`; the API's error otherwise.

    422 for a path that leads out (or through a symlink loop), 404 for one that does not exist,
    409 when a component that must be a directory is not one.
    """
    global _have_openat2
    try:
        if _have_openat2 is not False:
            try:
                fd = _openat2(dirfd, join(parts) or ".", flags, mode)
            except OSError as exc:
                if exc.errno != errno.ENOSYS:
                    raise
                _have_openat2 = False
            else:
                _have_openat2 = True
                return fd
        return _walk_open(dirfd, parts, flags, mode)
    except OSError as exc:
        raise translate(exc, parts, field) from None


def translate(exc: OSError, parts: Parts, field: str = "path") -> Exception:
    """The API error of an OSError met on `parts`."""
    shown = join(parts)[:200] or "the workspace"
    if exc.errno == errno.EXDEV:
        return escape_error(parts, field)
    if exc.errno == errno.ELOOP:
        return _invalid(field, f"{shown!r} goes through a symlink that is not followed (or a loop)")
    if exc.errno == errno.ENOENT:
        return NotFound(f"no file {shown!r} in the workspace")
    if exc.errno == errno.ENOTDIR:
        return Conflict(f"a component of {shown!r} is not a directory")
    if exc.errno == errno.EISDIR:
        return Conflict(f"{shown!r} is a directory")
    if exc.errno == errno.ENOTEMPTY:
        return Conflict(f"{shown!r} is a directory that is not empty")
    if exc.errno == errno.EEXIST:
        return Conflict(f"{shown!r} exists")
    if exc.errno == errno.ENAMETOOLONG:
        return _invalid(field, f"{shown!r} has a name that is too long")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Conflict(f"{shown!r} cannot be accessed: {exc.strerror}")
    return exc


def open_parent(dirfd: int, parts: Parts, *, make: bool, field: str = "path") -> int:
    """An `O_PATH` descriptor of the directory that holds `parts[-1]`, made (0755) when `make`."""
    if not parts:
        raise _invalid(field, "must name something inside the workspace, not the workspace itself")
    if make:
        make_dirs(dirfd, parts[:-1], field)
    return open_beneath(dirfd, parts[:-1], os.O_PATH | os.O_DIRECTORY, field=field)


def make_dirs(dirfd: int, parts: Parts, field: str = "path") -> None:
    """Make the directories `parts` beneath `dirfd` (0755), each inside the one resolved before."""
    holder = os.dup(dirfd)
    try:
        for depth in range(1, len(parts) + 1):
            try:
                fd = open_beneath(dirfd, parts[:depth], os.O_PATH | os.O_DIRECTORY, field=field)
            except NotFound:
                # One name (no slash) inside a directory already resolved beneath: it stays inside.
                try:
                    os.mkdir(parts[depth - 1], 0o755, dir_fd=holder)
                    inherit_owner(holder, parts[depth - 1])
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise translate(exc, parts[:depth], field) from None
                fd = open_beneath(dirfd, parts[:depth], os.O_PATH | os.O_DIRECTORY, field=field)
            os.close(holder)
            holder = fd
    finally:
        os.close(holder)


def inherit_owner(parent: int, name: str | None = None, fd: int | None = None) -> None:
    """Give what was just made in `parent` (the directory or symlink `name`, or the open file
    `fd`) the owner of `parent`, when the daemon runs as root and that is another user:
    workspaces of a root daemon belong to the sandbox's user (`Layout.give`), who must be able to
    change what the API wrote.

    An execution may swap something else in for `name` as soon as it is made: it is given through
    a descriptor of what is there (never following a symlink), and only if that is still a
    directory or a symlink, never a hard link to some other file (409 then)."""
    if os.geteuid() != 0:
        return
    st = os.fstat(parent)
    if st.st_uid == 0 and st.st_gid == 0:
        return
    if fd is not None:
        os.fchown(fd, st.st_uid, st.st_gid)
    elif name is not None:
        with closing(os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)) as made:
            mode = os.fstat(made).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                raise Conflict(f"{name[:200]!r} was replaced while it was made")
            _fchown_empty(made, st.st_uid, st.st_gid)


def _fchown_empty(fd: int, uid: int, gid: int) -> None:
    """fchownat(fd, "", AT_EMPTY_PATH): the owner of what an `O_PATH` descriptor holds, a
    symlink itself too (which `fchown` refuses on such a descriptor)."""
    if _libc.fchownat(fd, b"", uid, gid, _AT_EMPTY_PATH | _AT_SYMLINK_NOFOLLOW) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def follow_final(dirfd: int, parts: Parts, field: str = "path") -> Parts:
    """Where a write to `parts` lands: the path itself, or, when it is a symlink, the path it
    points to (followed as the kernel would, up to 40 links), which must stay beneath `dirfd`.

    422 for a link that leads out (or a loop); a link to nothing yet gives the path to create.
    """
    top = os.readlink(f"/proc/self/fd/{dirfd}")
    for _ in range(40):
        if not parts:
            return parts
        try:
            parent = open_beneath(dirfd, parts[:-1], os.O_PATH | os.O_DIRECTORY, field=field)
        except (NotFound, Conflict):
            return parts  # a missing or odd parent is for the caller to report
        with closing(parent):
            try:
                st = os.lstat(parts[-1], dir_fd=parent)
            except FileNotFoundError:
                return parts
            if not stat.S_ISLNK(st.st_mode):
                return parts
            target = os.readlink(parts[-1], dir_fd=parent)
            where = os.readlink(f"/proc/self/fd/{parent}")
        if target.startswith("/") or not (where == top or where.startswith(top.rstrip("/") + "/")):
            raise escape_error(parts, field)
        joined = os.path.normpath(os.path.join(os.path.relpath(where, top), target))
        if joined == ".." or joined.startswith("../"):
            raise escape_error(parts, field)
        parts = tuple(p for p in joined.split("/") if p not in ("", "."))
    raise _invalid(field, f"{join(parts)[:200]!r} goes through more than 40 symlinks")


#: A directory opened to be read: never through a symlink, and never anything else (a fifo or a
#: device in its place is not opened at all: ENOTDIR).
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_directory(parent: int | None, name: str) -> int:
    """The directory `name` of `parent` (None: of the working directory), opened to read;
    OSError for anything else there
    (`shutil.rmtree` and `os.fwalk` open what they found to be a directory a moment before
    without O_NOFOLLOW: a symlink swapped in meanwhile is followed, a fifo blocks)."""
    return os.open(name, _DIRECTORY, dir_fd=parent)


def remove_tree(parent: int, name: str) -> None:
    """Remove the entry `name` of the directory `parent`, a directory with everything under it,
    by descriptors: what is not a directory (any more) is unlinked itself, never followed."""
    try:
        fd = open_directory(parent, name)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        os.unlink(name, dir_fd=parent)
        return
    with closing(fd):
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            with contextlib.suppress(FileNotFoundError):  # gone meanwhile
                try:
                    os.unlink(child, dir_fd=fd)
                except IsADirectoryError:
                    remove_tree(fd, child)
    os.rmdir(name, dir_fd=parent)


def reopen(fd: int, flags: int) -> int:
    """`fd` (an `O_PATH` descriptor) opened again for reading or writing: the same inode, whatever
    its path now points to. (Through `/proc/self/fd`, the daemon's own descriptor.)"""
    return os.open(f"/proc/self/fd/{fd}", flags | os.O_CLOEXEC)


@contextlib.contextmanager
def closing(fd: int) -> Iterator[int]:
    """Close `fd` when the block ends."""
    try:
        yield fd
    finally:
        os.close(fd)


def kind_of(mode: int) -> FileType:
    """The wire `type` of a file mode."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def etag(st: os.stat_result) -> str:
    """The strong ETag of a file version: a new inode at every write through the API (a rename),
    and size, mtime and ctime for writes in place."""
    return f'"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}-{st.st_ctime_ns:x}"'


def not_regular(parts: Parts, field: str = "path") -> InvalidRequest:
    """The 422 of a fifo, socket or device: never opened."""
    return _invalid(field, f"{join(parts)[:200]!r} is not a regular file (a fifo, socket or device)")


def open_regular(dirfd: int, parts: Parts, field: str = "path") -> tuple[int, os.stat_result]:
    """A read descriptor of the regular file at `parts`, and its stat.

    Opened as `O_PATH` first, so a fifo or a device is refused (422) without ever being opened;
    a directory is a 409 (`conflict`).
    """
    with closing(open_beneath(dirfd, parts, os.O_PATH, field=field)) as handle:
        st = os.fstat(handle)
        if stat.S_ISDIR(st.st_mode):
            raise Conflict(f"{join(parts)[:200] or 'the workspace'!r} is a directory: list it with ?list")
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(parts, field)
        return reopen(handle, os.O_RDONLY), st
