"""The daemon's end of a code context's channel connects to the socket its driver made, in a
directory that belongs to the interpreter (the sandbox's user under a root daemon): never
through a symlink put there to another socket of the host."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from workbench.core.context_link import Link


def _listening(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    directory = os.open(path.parent, os.O_PATH)
    try:  # as the driver binds it: through its directory's descriptor, so any path fits
        listener.bind(f"/proc/self/fd/{directory}/{path.name}")
    finally:
        os.close(directory)
    listener.listen()
    listener.setblocking(False)
    return listener


async def test_a_symlink_to_another_socket_is_never_connected_through(tmp_path: Path) -> None:
    (tmp_path / "host").mkdir()
    (tmp_path / "chan").mkdir()
    with _listening(tmp_path / "host" / "other.sock") as host:
        os.symlink(tmp_path / "host" / "other.sock", tmp_path / "chan" / "sock")
        with pytest.raises(OSError):
            await Link.connect(str(tmp_path / "chan" / "sock"))
        with pytest.raises(BlockingIOError):
            host.accept()


async def test_the_drivers_own_socket_is_connected_whatever_the_length_of_its_path(tmp_path: Path) -> None:
    chan = tmp_path / ("c" * 120) / "chan"
    chan.mkdir(parents=True)
    with _listening(chan / "sock") as driver:
        link = await Link.connect(str(chan / "sock"))
        try:
            accepted, _ = driver.accept()
            accepted.close()
        finally:
            link.close()
