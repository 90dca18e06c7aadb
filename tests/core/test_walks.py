"""Walking a workspace's tree, to size it or to remove it, never opens what a symlink points to:
an execution may swap one in for a directory between the walk's look at it and its open, and
the daemon (root) would open whatever it names, a fifo (blocking a thread for ever) or a device.
No process, no daemon: the swap is made from inside the open it races."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.core.files import Files
from workbench.core.sessions import Workspaces, measure
from workbench.core.settings import Settings


class Swapper:
    """Wraps `os.open`: the first open of the directory `d` finds a symlink to `outside` there,
    put in its place just before; notes every open that reached `outside`."""

    def __init__(self, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outside = os.stat(outside)
        self.target, self.swapped, self.escaped = outside, False, 0
        real: Callable[..., int] = os.open

        def opening(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            if path == "d" and dir_fd is not None and not self.swapped:
                self.swapped = True
                os.unlink("d/f", dir_fd=dir_fd)
                os.rmdir("d", dir_fd=dir_fd)
                os.symlink(self.target, "d", dir_fd=dir_fd)
            fd = real(path, flags, mode, dir_fd=dir_fd)
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (self.outside.st_dev, self.outside.st_ino):
                self.escaped += 1
            return fd

        monkeypatch.setattr(os, "open", opening)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Settings, Path, Path]:
    """A session's workspace holding `top/d/f`, and a host directory beside it."""
    settings = Settings.load(environ={}, data_dir=tmp_path / "data", token="t" * 32)
    ws = settings.layout.workspace("admin", "s")
    (ws / "top" / "d").mkdir(parents=True)
    (ws / "top" / "d" / "f").write_bytes(b"x" * 10)
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "keep").write_bytes(b"y" * 1000)
    return settings, ws, outside


def test_sizing_a_workspace_never_opens_a_swapped_in_link(
    tree: tuple[Settings, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _settings, ws, outside = tree
    swapper = Swapper(outside, monkeypatch)
    measure(ws / "top")
    assert swapper.swapped and swapper.escaped == 0


async def test_deleting_a_directory_never_opens_a_swapped_in_link(
    tree: tuple[Settings, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, ws, outside = tree
    files = Files(Workspaces(settings))
    swapper = Swapper(outside, monkeypatch)
    await files.delete("admin", "s", "top")
    assert swapper.swapped and swapper.escaped == 0
    assert not (ws / "top").exists() and (outside / "keep").exists()


async def test_removing_a_session_never_opens_a_swapped_in_link(
    tree: tuple[Settings, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, ws, outside = tree
    swapper = Swapper(outside, monkeypatch)
    await Workspaces(settings).remove("admin", "s")
    assert swapper.swapped and swapper.escaped == 0
    assert not ws.exists() and (outside / "keep").exists()
