"""An execution's open input, and its pseudo-terminal: the ends the shim holds for it.

With ``open_stdin`` the leader's stdin is a pipe whose write end stays here; with ``tty`` the
leader runs on a pseudo-terminal whose master stays here. Either way the shim, not the daemon,
holds them, so they outlive a daemon crash and a restarted daemon finds them as they were.

Input never blocks the shim: it is written without blocking, and what the tree has not read yet
waits in a buffer of at most `MAX_PENDING_INPUT` bytes; input that does not fit is refused whole
(`InputFull`), so that a retry sends it exactly once. A terminal's output is copied from the
master to the stdout spool file as soon as it is readable, so the tree never waits on a reader.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import termios
from collections.abc import Callable
from typing import Protocol

from ._errors import InputClosed, InputFull, SandboxError

#: The most input bytes the shim keeps for one execution that has not read them yet.
MAX_PENDING_INPUT = 1 << 20

#: What an end of file is on a terminal (VEOF, Ctrl-D): the master cannot be closed without
#: hanging the terminal up.
TERMINAL_EOF = b"\x04"

_READ_CHUNK = 1 << 16


class FdHost(Protocol):
    """What a channel needs from the shim's event loop."""

    def watch_fd(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` is readable."""

    def watch_fd_writable(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` is writable."""

    def unwatch_fd(self, fd: int) -> None:
        """Stop watching `fd`."""

    def log(self, message: str) -> None:
        """Write a line to the shim's log."""


class Channel:
    """The input end (and, for a terminal, the output copy) of one execution.

    Made before the spawn: `child_fds` are the leader's (stdin, stdout, stderr), closed in the
    shim by `spawned` once the leader has them.
    """

    def __init__(self, host: FdHost, name: str, tty: tuple[int, int] | None, stdout_path: str | None) -> None:
        self.host = host
        self.name = name
        self.tty = tty is not None
        self.pending = bytearray()
        self.eof_wanted = False
        #: A write found that nothing reads its stdin any more (EPIPE, or a terminal hung up).
        self.unread = False
        self.input_fd: int | None = None
        self.output_fd: int | None = None  # the master, read (a terminal only)
        self.spool_fd: int | None = None
        self._writable_watched = False
        self._output_watched = False
        self._child: list[int] = []
        if tty is None:
            read_end, write_end = os.pipe2(os.O_CLOEXEC)
            os.set_blocking(write_end, False)
            self.input_fd = write_end
            self._child = [read_end]
            return
        master, slave = os.openpty()  # both close-on-exec (PEP 446)
        try:
            _set_size(master, *tty)
            os.set_blocking(master, False)
            self.input_fd = os.dup(master)
            self.output_fd = master
            self._child = [slave]
            assert stdout_path is not None
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
            self.spool_fd = os.open(stdout_path, flags, 0o600)
        except BaseException:
            for fd in (master, slave, self.input_fd):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            raise

    @property
    def child_stdin(self) -> int:
        """The leader's stdin (the pipe's read end, or the terminal)."""
        return self._child[0]

    def spawned(self) -> None:
        """The leader runs: close the shim's copies of its ends, and start copying its output."""
        for fd in self._child:
            os.close(fd)
        self._child = []
        if self.output_fd is not None:
            self.host.watch_fd(self.output_fd, self._readable)
            self._output_watched = True

    # -- input ------------------------------------------------------------------------------

    def write(self, data: bytes, eof: bool) -> int:
        """Queue `data` (then an end of file if `eof`); returns the bytes still unread after it.

        Raises:
            InputClosed: the input was closed already (an end of file sent, or the tree ended).
            InputFull: `data` does not fit beside what waits; nothing of it was taken.
        """
        if self.input_fd is None or (self.eof_wanted and not self.tty):
            raise InputClosed(f"the stdin of {self.name!r} is closed")
        extra = TERMINAL_EOF if eof and self.tty else b""
        if len(self.pending) + len(data) + len(extra) > MAX_PENDING_INPUT:
            raise InputFull(
                f"{self.name!r} has not read {len(self.pending)} bytes of its input yet; the shim keeps "
                f"at most {MAX_PENDING_INPUT} bytes waiting: try again once it reads"
            )
        self.pending += data + extra
        if eof and not self.tty:
            self.eof_wanted = True
        self._push()
        if self.unread:
            raise InputClosed(f"nothing reads the stdin of {self.name!r} any more")
        return len(self.pending)

    def _push(self) -> None:
        fd = self.input_fd
        if fd is None:
            return
        while self.pending:
            try:
                sent = os.write(fd, self.pending[:_READ_CHUNK])
            except BlockingIOError:
                break
            except OSError as e:
                # EPIPE: nothing reads it any more (the shim ignores SIGPIPE); EIO: hung up.
                if e.errno not in (errno.EPIPE, errno.EIO):
                    self.host.log(f"input to {self.name} failed: {e}")
                self.unread = True
                self.pending.clear()
                self._close_input()
                return
            del self.pending[:sent]
        if self.pending and not self._writable_watched:
            self.host.watch_fd_writable(fd, self._push)
            self._writable_watched = True
        elif not self.pending:
            if self._writable_watched:
                self.host.unwatch_fd(fd)
                self._writable_watched = False
            if self.eof_wanted:
                self._close_input()

    def _close_input(self) -> None:
        fd, self.input_fd = self.input_fd, None
        if fd is None:
            return
        if self._writable_watched:
            self.host.unwatch_fd(fd)
            self._writable_watched = False
        os.close(fd)

    # -- the terminal -----------------------------------------------------------------------

    def resize(self, rows: int, cols: int) -> None:
        """Set the terminal's size (the kernel sends SIGWINCH to its foreground process group)."""
        if self.output_fd is None:
            raise InputClosed(f"{self.name!r} has no terminal (any more)")
        if not (1 <= rows <= 65535 and 1 <= cols <= 65535):
            raise SandboxError(f"invalid terminal size {rows}x{cols}")
        _set_size(self.output_fd, rows, cols)

    def foreground_group(self) -> int | None:
        """The terminal's foreground process group, or None (no terminal, or no session on it)."""
        if self.output_fd is None:
            return None
        try:
            group = os.tcgetpgrp(self.output_fd)
        except OSError:
            return None
        return group if group > 1 else None

    def signal_foreground(self, sig: int) -> bool:
        """Send `sig` to the terminal's foreground process group; False if there is none."""
        group = self.foreground_group()
        if group is None or group == os.getpgrp():
            return False
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return False
        return True

    def _readable(self) -> None:
        self.drain(limit=16 * _READ_CHUNK)

    def drain(self, limit: int | None = None) -> None:
        """Copy what the terminal holds to the spool file (all of it, or about `limit` bytes)."""
        fd = self.output_fd
        copied = 0
        while fd is not None and (limit is None or copied < limit):
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:  # EIO: no process holds the terminal any more
                data = b""
            if not data:
                self._close_output()
                return
            copied += len(data)
            self._spool(data)

    def _spool(self, data: bytes) -> None:
        if self.spool_fd is None:
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.spool_fd, view) :]
        except OSError as e:
            self.host.log(f"cannot write the output of {self.name}: {e}; the rest is dropped")
            os.close(self.spool_fd)
            self.spool_fd = None

    def _close_output(self) -> None:
        fd, self.output_fd = self.output_fd, None
        if fd is not None:
            if self._output_watched:
                self.host.unwatch_fd(fd)
                self._output_watched = False
            os.close(fd)

    def close(self) -> None:
        """Close everything (the tree ended, or the shim forgets it): the rest of the output first."""
        self.drain()
        self._close_output()
        self._close_input()
        for fd in self._child:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._child = []
        if self.spool_fd is not None:
            os.close(self.spool_fd)
            self.spool_fd = None


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
