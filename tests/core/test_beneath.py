"""`beneath`: every way out of a directory is refused, with openat2 and with the fallback walk of
kernels that lack it (which refuses every symlink); no process, no daemon."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.core import beneath
from workbench.wire.errors import Conflict, InvalidRequest, NotFound


@pytest.fixture(params=["openat2", "walk"])
def root(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    if request.param == "walk":
        monkeypatch.setattr(beneath, "_have_openat2", False)
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "secret").write_text("s")
    (ws / "sub" / "f").write_text("ff")
    os.symlink("/etc/passwd", ws / "abs")
    os.symlink("../secret", ws / "rel")
    os.symlink("sub", ws / "in")
    os.symlink(str(ws / "sub"), ws / "abs-in")
    os.mkfifo(ws / "fifo")
    fd = os.open(ws, os.O_PATH | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def read(fd: int, path: str) -> bytes:
    handle, _ = beneath.open_regular(fd, beneath.parse(path))
    with beneath.closing(handle):
        return os.read(handle, 100)


@pytest.mark.parametrize("path", ["abs", "rel", "abs-in/f", "fifo"])
def test_ways_out_and_odd_files_are_invalid(root: int, path: str) -> None:
    with pytest.raises(InvalidRequest):
        read(root, path)


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "sub/../../x", "a\x00b", "x" * 5000])
def test_paths_that_are_not_relative_and_inside_are_invalid(path: str) -> None:
    with pytest.raises(InvalidRequest):
        beneath.parse(path)


def test_inside_is_readable_and_a_link_inside_is_followed_where_the_kernel_can(root: int) -> None:
    assert read(root, "sub/f") == b"ff"
    assert read(root, "./sub//f") == b"ff"
    if beneath._have_openat2:
        assert read(root, "in/f") == b"ff"
    else:
        with pytest.raises(InvalidRequest):
            read(root, "in/f")
    with pytest.raises(NotFound):
        read(root, "sub/nope")
    with pytest.raises(Conflict):
        read(root, "sub/f/x")
    with pytest.raises(Conflict):
        read(root, "sub")


def test_making_directories_stays_inside(root: int) -> None:
    beneath.make_dirs(root, ("a", "b", "c"))
    os.close(beneath.open_beneath(root, ("a", "b", "c"), os.O_PATH | os.O_DIRECTORY))
    with pytest.raises(InvalidRequest):
        beneath.make_dirs(root, ("rel", "x"))
    with pytest.raises(Conflict):
        beneath.make_dirs(root, ("sub", "f", "x"))


def test_a_write_follows_a_final_link_only_inside(root: int) -> None:
    assert beneath.follow_final(root, ("sub", "f")) == ("sub", "f")
    assert beneath.follow_final(root, ("nothing",)) == ("nothing",)
    with pytest.raises(InvalidRequest):
        beneath.follow_final(root, ("abs",))
    with pytest.raises(InvalidRequest):
        beneath.follow_final(root, ("rel",))
