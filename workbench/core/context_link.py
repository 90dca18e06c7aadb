"""The daemon's end of a code context's channel: length-prefixed JSON frames on the Unix socket
its driver (`workbench.core.ctxdriver`) listens on, with file descriptors passed alongside."""

from __future__ import annotations

import array
import errno
import json
import os
import socket
import stat
import struct
from collections.abc import Sequence
from typing import Any

import trio

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024


class LinkClosed(Exception):
    """The other end closed the channel, or it broke."""


class Link:
    """One connection to a context's driver."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.sock = sock
        self.buffer = b""
        self.lock = trio.Lock()

    @classmethod
    async def connect(cls, path: str) -> Link:
        """Connect to the socket at `path`. Raises OSError when nothing listens there, or when
        what is there is not a socket.

        Its directory belongs to the interpreter (the sandbox's user, under a root daemon), which
        could put a symlink to any socket of the host there: the socket is opened as what the
        name holds (`O_PATH | O_NOFOLLOW`) and connected through that descriptor, never by its
        name. (Which also lets any path fit: a socket's path is at most 107 bytes.)
        """
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            target = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                if not stat.S_ISSOCK(os.fstat(target).st_mode):
                    raise OSError(errno.ENOTSOCK, "not a socket (a symlink is never followed)", path)
                await sock.connect(f"/proc/self/fd/{target}")
            finally:
                os.close(target)
        except BaseException:
            sock.close()
            raise
        return cls(sock)

    async def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        """Send one frame; `fds` go with its first byte. Raises LinkClosed."""
        data = json.dumps(message).encode("utf-8")
        frame = HEADER.pack(len(data)) + data
        try:
            async with self.lock:
                sent = 0
                if fds:
                    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
                    sent = await self.sock.sendmsg([frame], ancillary)
                while sent < len(frame):
                    sent += await self.sock.send(frame[sent:])
        except OSError as exc:
            raise LinkClosed(str(exc)) from None

    async def receive(self) -> dict[str, Any]:
        """The next frame. Raises LinkClosed at the end of the connection."""
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if size > MAX_FRAME:
                    raise LinkClosed(f"a frame of {size} bytes")
                end = HEADER.size + size
                if len(self.buffer) >= end:
                    body, self.buffer = self.buffer[HEADER.size : end], self.buffer[end:]
                    try:
                        message = json.loads(body.decode("utf-8"))
                    except ValueError as exc:
                        raise LinkClosed(f"a frame that is not JSON: {exc}") from None
                    if not isinstance(message, dict):
                        raise LinkClosed("a frame that is not an object")
                    return message
            try:
                data = await self.sock.recv(1 << 16)
            except OSError as exc:
                raise LinkClosed(str(exc)) from None
            if not data:
                raise LinkClosed("the driver closed the channel")
            self.buffer += data

    def close(self) -> None:
        self.sock.close()
