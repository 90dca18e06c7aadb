"""The few Linux system calls Python 3.11's os module lacks, through ctypes."""

from __future__ import annotations

import ctypes
import os
import struct

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWPID = 0x20000000
CLONE_NEWNS = 0x00020000

IN_MODIFY = 0x00000002
IN_IGNORED = 0x00008000
_IN_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


def _check(result: int) -> int:
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return result


def set_child_subreaper() -> None:
    """Make orphaned descendants of this process its children (so it reaps them)."""
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), 0, 0, 0))


def unshare(flags: int) -> None:
    """unshare(2)."""
    _check(_libc.unshare(ctypes.c_int(flags)))


def setns(fd: int, nstype: int) -> None:
    """setns(2)."""
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)))


def probe_pid_namespace() -> str | None:
    """Whether this process may create pid namespaces; None if so, else why not.

    Does not fork: unshare(CLONE_NEWPID) only changes the namespace of the calling thread's
    future children, and setns() puts it back at once. nsproxy is per thread, so other
    threads (trio's workers) are never affected.
    """
    try:
        own = os.open("/proc/thread-self/ns/pid_for_children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        return f"cannot read the pid namespace: {e.strerror}"
    try:
        try:
            unshare(CLONE_NEWPID)
        except OSError as e:
            return f"unshare(CLONE_NEWPID) failed: {e.strerror}"
        setns(own, CLONE_NEWPID)
        return None
    finally:
        os.close(own)


class Inotify:
    """A non-blocking inotify instance."""

    def __init__(self) -> None:
        self.fd = _check(_libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))

    def add_watch(self, path: str, mask: int) -> int:
        """Watch `path`; returns the watch descriptor."""
        return _check(_libc.inotify_add_watch(self.fd, os.fsencode(path), ctypes.c_uint32(mask)))

    def rm_watch(self, wd: int) -> None:
        """Stop watching (ignores watches the kernel already dropped)."""
        _libc.inotify_rm_watch(self.fd, wd)

    def read_events(self) -> list[tuple[int, int]]:
        """All pending events as (wd, mask) pairs; empty when there are none."""
        events: list[tuple[int, int]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return events
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _IN_EVENT.unpack_from(data, offset)
                events.append((wd, mask))
                offset += _IN_EVENT.size + length
