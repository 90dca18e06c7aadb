"""Watching a workspace tree for changes: `files:watch`, from inotify.

The daemon has one inotify instance for these watches (apart from capture's, whose watches are
one-shot), with persistent watches on every directory under a watched path. Two watchers of one
directory share its kernel watch (inotify gives the same descriptor for the same inode); each
keeps its own map from watch descriptor to path and its own bounded queue of events. A watch is
added through `/proc/self/fd/N` of a directory opened beneath the workspace, so it lands on the
very directory that was checked, never on something a symlink put in its place. A directory that
appears later is watched at once and its contents reported as created; one that is moved within
the tree is walked again under its new name. A watcher that falls behind by more than
`MAX_PENDING` events gets one `overflow` event (list the tree again) instead of the rest.
"""

from __future__ import annotations

import collections
import ctypes
import os
import stat
import struct
from collections.abc import Iterator

import trio

from workbench.core import beneath
from workbench.core.beneath import Parts, closing
from workbench.core.follow import IN_CLOEXEC, IN_CLOSE_WRITE, IN_CREATE, IN_IGNORED, IN_MODIFY, IN_NONBLOCK
from workbench.core.records import format_time, now_ms
from workbench.core.writing import is_temp
from workbench.wire.errors import InvalidRequest
from workbench.wire.files import FileEvent

IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
_MASK = (
    (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF)
    | IN_ONLYDIR
    | IN_EXCL_UNLINK
)
_EVENT = struct.Struct("iIII")
#: Most directories one watch may cover, and events one watcher may have waiting.
MAX_DIRECTORIES = 8192
MAX_PENDING = 10_000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
_libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]


class TreeWatcher:
    """The daemon's inotify instance for workspace watches; `run()` dispatches its events."""

    def __init__(self) -> None:
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._fd: int = fd
        self._subs: dict[int, set[Watch]] = {}
        self._watches: set[Watch] = set()

    def _add(self, dirfd: int, watch: Watch) -> int | None:
        wd = _libc.inotify_add_watch(self._fd, f"/proc/self/fd/{dirfd}".encode(), _MASK)
        if wd < 0:
            return None
        self._subs.setdefault(wd, set()).add(watch)
        return int(wd)

    def _release(self, wd: int, watch: Watch) -> None:
        users = self._subs.get(wd)
        if users is None:
            return
        users.discard(watch)
        if not users:
            del self._subs[wd]
            _libc.inotify_rm_watch(self._fd, wd)

    async def run(self) -> None:
        """Dispatch events until cancelled."""
        while True:
            await trio.lowlevel.wait_readable(self._fd)
            try:
                data = os.read(self._fd, 256 * 1024)
            except BlockingIOError:
                continue
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                raw = data[pos + _EVENT.size : pos + _EVENT.size + length].rstrip(b"\0")
                pos += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    for watch in self._watches:
                        watch._overflow()
                    continue
                for watch in list(self._subs.get(wd, ())):
                    watch._event(wd, mask, os.fsdecode(raw))
                if mask & IN_IGNORED:
                    self._subs.pop(wd, None)

    def close(self) -> None:
        for watch in list(self._watches):
            watch.close()
        os.close(self._fd)


class Watch:
    """The changes under one path of one workspace, as `FileEvent`s, for one follower."""

    def __init__(self, watcher: TreeWatcher, root: int, top: Parts) -> None:
        self._watcher = watcher
        self._root = root  # an O_PATH descriptor of the workspace, closed with the watch
        self.top = top
        self._dirs: dict[int, Parts] = {}
        self._pending: collections.deque[FileEvent] = collections.deque()
        self._overflowed = False
        self._lot = trio.lowlevel.ParkingLot()
        self.closed = False
        watcher._watches.add(self)

    # -- setting up -------------------------------------------------------------------------

    def start(self) -> None:
        """Watch every directory under `top` (blocking; 422 past `MAX_DIRECTORIES`)."""
        with closing(beneath.open_beneath(self._root, self.top, os.O_RDONLY | os.O_DIRECTORY)) as fd:
            self._cover(fd, self.top, report=False)

    def _cover(self, fd: int, parts: Parts, *, report: bool) -> None:
        """Watch the directory `fd` (at `parts`) and the ones under it; report their contents."""
        if len(self._dirs) >= MAX_DIRECTORIES:
            if not report:
                raise InvalidRequest(
                    f"more than {MAX_DIRECTORIES} directories under {beneath.join(self.top)!r}: "
                    "watch a smaller part of the workspace",
                    details=[{"field": "path", "message": f"more than {MAX_DIRECTORIES} directories"}],
                )
            self._overflow()
            return
        wd = self._watcher._add(fd, self)
        if wd is None:
            return
        self._dirs[wd] = parts
        device = os.fstat(fd).st_dev
        for name, is_dir in _children(fd):
            if report:
                self._push("created", (*parts, name), is_dir)
            if not is_dir:
                continue
            try:
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                sub = os.open(name, flags, dir_fd=fd)
            except OSError:
                continue
            with closing(sub):
                if os.fstat(sub).st_dev == device:  # a mount point is not entered
                    self._cover(sub, (*parts, name), report=report)

    # -- events -----------------------------------------------------------------------------

    def _event(self, wd: int, mask: int, name: str) -> None:
        parts = self._dirs.get(wd)
        if parts is None:
            return
        if mask & IN_IGNORED:
            del self._dirs[wd]
            return
        if mask & IN_DELETE_SELF:
            if parts == self.top:
                self._push("deleted", parts, True)
            return
        if not name or is_temp(name):
            return
        here, is_dir = (*parts, name), bool(mask & IN_ISDIR)
        if mask & (IN_CREATE | IN_MOVED_TO):
            self._push("created", here, is_dir)
            if is_dir:
                self._forget(here)
                self._adopt(here)
        elif mask & (IN_DELETE | IN_MOVED_FROM):
            self._push("deleted", here, is_dir)
            if is_dir:
                self._forget(here)
        elif mask & (IN_MODIFY | IN_CLOSE_WRITE) and not is_dir:
            self._push("modified", here, False)

    def _adopt(self, parts: Parts) -> None:
        try:
            fd = beneath.open_beneath(self._root, parts, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except Exception:
            return  # gone again, or not a directory any more
        with closing(fd):
            self._cover(fd, parts, report=True)

    def _forget(self, prefix: Parts) -> None:
        for wd, parts in list(self._dirs.items()):
            if parts[: len(prefix)] == prefix:
                del self._dirs[wd]
                self._watcher._release(wd, self)

    def _push(self, kind: str, parts: Parts, is_dir: bool) -> None:
        if self._overflowed:
            return
        if len(self._pending) >= MAX_PENDING:
            self._overflow()
            return
        event = FileEvent(
            type=kind,  # type: ignore[arg-type]
            path=beneath.shown(beneath.join(parts)),
            directory=is_dir,
            timestamp=format_time(now_ms()) or "",
        )
        last = self._pending[-1] if self._pending else None
        if last is not None and (last.type, last.path) == (event.type, event.path):
            return  # a burst of writes to one file is one `modified`
        self._pending.append(event)
        self._lot.unpark_all()

    def _overflow(self) -> None:
        if not self._overflowed:
            self._overflowed = True
            self._pending.clear()
            self._lot.unpark_all()

    # -- following --------------------------------------------------------------------------

    async def take(self) -> list[FileEvent]:
        """The events waiting (at least one; an `overflow` alone after a loss)."""
        while not self._pending and not self._overflowed and not self.closed:
            await self._lot.park()
        if self._overflowed:
            self._overflowed = False
            return [FileEvent(type="overflow", path="", timestamp=format_time(now_ms()) or "")]
        events = list(self._pending)
        self._pending.clear()
        return events

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for wd in list(self._dirs):
            self._watcher._release(wd, self)
        self._dirs.clear()
        self._watcher._watches.discard(self)
        os.close(self._root)
        self._lot.unpark_all()


def _children(fd: int) -> Iterator[tuple[str, bool]]:
    """(name, is a directory) of the entries of the directory `fd`, never following a symlink."""
    try:
        with closing(os.dup(fd)) as copy, os.scandir(copy) as entries:
            for entry in entries:
                if is_temp(entry.name):
                    continue
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                yield entry.name, stat.S_ISDIR(mode)
    except OSError:
        return
