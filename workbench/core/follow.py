"""Following files as they grow: one inotify instance for the daemon, one-shot watches per reader.

The capture of an execution sleeps until the kernel says one of its files was written, so output
is picked up at once and an idle execution costs nothing. Watches are one-shot (IN_ONESHOT): the
first write after the capture armed them wakes it and removes them, and further writes raise no
event at all until the capture, about to read the files again, re-arms them. A process writing at
full speed so costs one wake-up per flush interval, not one per write (each of which would cost
the writer a context switch). One instance serves every execution, since the kernel allows a
user only a few (128 by default). Where inotify is missing the daemon does not start.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from dataclasses import dataclass, field

import trio

IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_CREATE = 0x00000100
IN_IGNORED = 0x00008000
IN_ONESHOT = 0x80000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
_libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


@dataclass(eq=False)
class _Path:
    path: bytes
    mask: int
    wd: int = -1  # -1: not armed (never, or its one event fired)


@dataclass(eq=False)
class WatchGroup:
    """Some files of one reader, with one wake-up for all of them. Get one from `Inotify.group`."""

    _inotify: Inotify
    version: int = 0
    _paths: list[_Path] = field(default_factory=list)
    _lot: trio.lowlevel.ParkingLot = field(default_factory=trio.lowlevel.ParkingLot)
    _interrupted: bool = False

    def add(self, path: str, mask: int = IN_MODIFY | IN_CLOSE_WRITE) -> None:
        """Watch `path` too (it must exist); armed at once."""
        entry = _Path(os.fsencode(path), mask)
        self._paths.append(entry)
        self._inotify._arm(self, entry)

    def arm(self) -> None:
        """Re-arm the watches whose event fired: call right before reading the files again."""
        for entry in self._paths:
            if entry.wd < 0:
                self._inotify._arm(self, entry)

    async def wait(self, seen: int) -> None:
        """Return once a watched file changed after `version` was `seen`, or `interrupt()`."""
        while self.version == seen and not self._interrupted:
            await self._lot.park()

    def interrupt(self) -> None:
        """Make every pending and later `wait` return."""
        self._interrupted = True
        self._bump()

    def close(self) -> None:
        for entry in self._paths:
            self._inotify._disarm(entry)
        self._paths.clear()
        self._bump()

    def _bump(self) -> None:
        self.version += 1
        self._lot.unpark_all()


class Inotify:
    """The daemon's inotify instance; `run()` dispatches the kernel's events to watch groups."""

    def __init__(self) -> None:
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise _fail("inotify_init1")
        self._fd: int = fd
        self._by_wd: dict[int, tuple[WatchGroup, _Path]] = {}

    def group(self) -> WatchGroup:
        return WatchGroup(self)

    def _arm(self, group: WatchGroup, entry: _Path) -> None:
        wd = _libc.inotify_add_watch(self._fd, entry.path, entry.mask | IN_ONESHOT)
        if wd < 0:
            raise _fail(f"inotify_add_watch({os.fsdecode(entry.path)})")
        entry.wd = wd
        self._by_wd[wd] = (group, entry)

    def _disarm(self, entry: _Path) -> None:
        if entry.wd >= 0:
            self._by_wd.pop(entry.wd, None)
            _libc.inotify_rm_watch(self._fd, entry.wd)  # EINVAL once it fired or the file is gone
            entry.wd = -1

    async def run(self) -> None:
        """Dispatch events until cancelled."""
        while True:
            await trio.lowlevel.wait_readable(self._fd)
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                continue
            woken: set[WatchGroup] = set()
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                pos += _EVENT.size + length
                found = self._by_wd.get(wd)
                if found is None:
                    continue
                group, entry = found
                if mask & IN_IGNORED or entry.wd == wd:
                    # One-shot: the kernel removed the watch with this event (or the file went).
                    del self._by_wd[wd]
                    if entry.wd == wd:
                        entry.wd = -1
                if not mask & IN_IGNORED:
                    woken.add(group)
            for group in woken:
                group._bump()

    def close(self) -> None:
        for group, _entry in list(self._by_wd.values()):
            group._bump()
        self._by_wd.clear()
        os.close(self._fd)
