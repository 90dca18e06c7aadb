"""Under a root daemon, what the file routes make in a workspace (a directory, an archive's
symlink) goes to the workspace's owner through a descriptor of what was made: whatever an
execution swaps in for it meanwhile (a hard link to a file of another owner) is never given
away. No process, no daemon: the swap is made from inside the call it races."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.core import archives, beneath
from workbench.wire.errors import Conflict

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only a root daemon gives files away")

NOBODY = 65534


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[int]:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, NOBODY, NOBODY)
    fd = os.open(ws, os.O_PATH | os.O_DIRECTORY)
    yield fd
    os.close(fd)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A root's file beside the workspace, on its file system."""
    path = tmp_path / "outside"
    path.write_text("root's\n")
    return path


def _swap_for_link(outside: Path, name: str, dir_fd: int | None) -> None:
    """Put a hard link to `outside` where `name` was just made (as an execution would)."""
    if stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
        os.rmdir(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)
    os.link(outside, name, dst_dir_fd=dir_fd)


def test_a_directory_swapped_as_it_is_made_gives_nothing_away(
    workspace: int, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.mkdir

    def mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real(path, mode, dir_fd=dir_fd)
        _swap_for_link(outside, path, dir_fd)

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(Conflict):
        beneath.make_dirs(workspace, ("made",))
    assert os.stat(outside).st_uid == 0


def test_an_archives_symlink_swapped_as_it_is_made_gives_nothing_away(
    workspace: int, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tar = tmp_path / "up.tar"
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as handle:
        info = tarfile.TarInfo("link")
        info.type, info.linkname = tarfile.SYMTYPE, "elsewhere"
        handle.addfile(info)
    tar.write_bytes(data.getvalue())
    archive = archives.read_members(str(tar), (), 1 << 20)
    real = os.symlink

    def symlink(src: Any, dst: Any, target_is_directory: bool = False, *, dir_fd: int | None = None) -> None:
        real(src, dst, target_is_directory, dir_fd=dir_fd)
        _swap_for_link(outside, dst, dir_fd)

    monkeypatch.setattr(os, "symlink", symlink)
    try:
        with pytest.raises(Conflict):
            archives.unpack(workspace, archive, 1 << 20)
    finally:
        archive.close()
    assert os.stat(outside).st_uid == 0


def test_what_is_made_unswapped_goes_to_the_workspaces_owner(workspace: int) -> None:
    beneath.make_dirs(workspace, ("a", "b"))
    os.symlink("a", "link", dir_fd=workspace)
    beneath.inherit_owner(workspace, "link")
    for name in ("a", "a/b", "link"):
        st = os.lstat(name, dir_fd=workspace)
        assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY), name
