"""Following files as they grow: one inotify instance for the daemon, a wake-up per watched file.

The capture of an execution sleeps until the kernel says one of its spool files was written, so
output is picked up at once and an idle execution costs nothing. Where inotify is missing (not
Linux), `Inotify.open()` fails and the daemon refuses to start rather than poll.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from dataclasses import dataclass, field

import trio

IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_CREATE = 0x00000100
IN_IGNORED = 0x00008000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")


@dataclass(eq=False)
class FileWatch:
    """Woken whenever the watched file is written. Use `version` like the journal's `Watch`."""

    path: str
    wd: int = -1
    version: int = 0
    _lot: trio.lowlevel.ParkingLot = field(default_factory=trio.lowlevel.ParkingLot)

    async def wait_changed(self, seen: int) -> None:
        """Return once the file was written after `version` was `seen`."""
        while self.version == seen:
            await self._lot.park()

    def bump(self) -> None:
        self.version += 1
        self._lot.unpark_all()


class Inotify:
    """The daemon's inotify instance. `run()` dispatches kernel events to `FileWatch`es."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._fd: int = fd
        self._by_wd: dict[int, list[FileWatch]] = {}

    def add(self, path: str, mask: int = IN_MODIFY | IN_CLOSE_WRITE) -> FileWatch:
        """Watch `path` (which must exist). Several watches of one path share the kernel watch."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask)
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_add_watch({path}): {os.strerror(err)}")
        watch = FileWatch(path, wd)
        self._by_wd.setdefault(wd, []).append(watch)
        return watch

    def remove(self, watch: FileWatch) -> None:
        """Stop watching; wakes the watch once more so no one sleeps on it forever."""
        watchers = self._by_wd.get(watch.wd)
        if watchers is None or watch not in watchers:
            return
        watchers.remove(watch)
        if not watchers:
            del self._by_wd[watch.wd]
            self._libc.inotify_rm_watch(self._fd, watch.wd)  # EINVAL when the file is gone: fine
        watch.bump()

    async def run(self) -> None:
        """Dispatch events until cancelled."""
        while True:
            await trio.lowlevel.wait_readable(self._fd)
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                continue
            except OSError as exc:  # pragma: no cover - the kernel does not fail reads of inotify
                if exc.errno == errno.EINTR:
                    continue
                raise
            woken: set[int] = set()
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                pos += _EVENT.size + length
                if mask & IN_IGNORED:
                    # The file was removed: wake its watchers (they will find it gone or final).
                    for watch in self._by_wd.pop(wd, []):
                        watch.bump()
                    continue
                woken.add(wd)
            for wd in woken:
                for watch in self._by_wd.get(wd, ()):
                    watch.bump()

    def close(self) -> None:
        for watchers in self._by_wd.values():
            for watch in watchers:
                watch.bump()
        self._by_wd.clear()
        os.close(self._fd)
