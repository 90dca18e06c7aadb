"""`wb.files(session)`: the workspace through both clients, each method from its one description."""

from __future__ import annotations

import inspect
import io
import os
import tarfile
import threading
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, InvalidRequest, NotFound, PreconditionFailed, WorkbenchError
from workbench.client.files import FILE_METHODS, unpack
from workbench.client.files_handles import AsyncFiles, Files


def test_the_two_handles_have_the_described_methods_alike() -> None:
    for handle in (Files, AsyncFiles):
        public = {n for n in dir(handle) if not n.startswith("_")}
        assert public == set(FILE_METHODS) | {"client"}  # and the attribute session_id
    for name, described in FILE_METHODS.items():
        sync, aio = getattr(Files, name), getattr(AsyncFiles, name)
        assert inspect.signature(sync).parameters == inspect.signature(aio).parameters
        assert sync.__doc__ == aio.__doc__ == described.plan.__doc__
        assert inspect.isgeneratorfunction(sync) is described.iterates
        assert inspect.isasyncgenfunction(aio) is described.iterates
        assert inspect.iscoroutinefunction(aio) is not described.iterates


def blocking(url: str, local: Path) -> None:
    """Every method of `Files`, blocking (in a worker thread while the daemon serves)."""
    with Client(url, TOKEN) as wb:
        files = wb.files("client")
        entry = files.write("notes/a.txt", "héllo\n")
        assert (entry.path, entry.size_bytes) == ("notes/a.txt", 7)
        assert files.read("notes/a.txt") == "héllo\n".encode()
        assert files.read("notes/a.txt", 1, 3) == "é".encode()
        data = os.urandom(100_000)
        files.write("bin/blob", data)
        assert files.read("bin/blob") == data
        with pytest.raises(PreconditionFailed):
            files.write("notes/a.txt", "x", if_match='"stale"')
        with pytest.raises(PreconditionFailed):
            files.write("notes/a.txt", "x", create_only=True)
        files.write("notes/a.txt", "new", if_match=entry.etag)
        listing = files.list(depth=3)
        assert [e.path for e in listing.entries] == ["bin", "bin/blob", "notes", "notes/a.txt"]
        assert files.move("notes/a.txt", "notes/b.txt").path == "notes/b.txt"
        files.delete("notes/b.txt")
        with pytest.raises(NotFound):
            files.read("notes/b.txt")
        (local / "up" / "sub").mkdir(parents=True)
        (local / "up" / "sub" / "x.txt").write_text("x")
        (local / "up" / "y.bin").write_bytes(b"\0\1\2")
        result = files.upload(local / "up", "tree")
        assert (result.files, result.path) == (2, "tree")
        files.download("tree", to=local / "down")
        assert (local / "down" / "sub" / "x.txt").read_text() == "x"
        assert (local / "down" / "y.bin").read_bytes() == b"\0\1\2"
        assert files.download("tree") != b""  # bytes without `to` (typed `bytes | None`)
        seen = []
        changer = threading.Timer(0.5, lambda: Client(url, TOKEN).files("client").write("w.txt", "w"))
        changer.start()
        for event in files.watch(timeout=20):
            seen.append(event)
            if event.path == "w.txt":
                break
        changer.join()
        assert seen[-1].type == "created"


async def test_the_blocking_files_handle(wb: DaemonHandle, tmp_path: Path) -> None:
    with ceilings.within(60, "the blocking files scenario"):
        await trio.to_thread.run_sync(blocking, wb.url, tmp_path)


async def test_the_async_files_handle(wb: DaemonHandle, tmp_path: Path) -> None:
    async with AsyncClient(wb.url, TOKEN) as wb_client:
        files = wb_client.files("async")
        await files.write("a.txt", b"async")
        assert await files.read("a.txt") == b"async"
        assert [e.name for e in (await files.list()).entries] == ["a.txt"]
        (tmp_path / "tree").mkdir()
        (tmp_path / "tree" / "t.txt").write_text("t")
        assert (await files.upload(tmp_path / "tree", "t")).files == 1
        await files.download("t", to=tmp_path / "back")
        assert (tmp_path / "back" / "t.txt").read_text() == "t"
        events = []
        seen = trio.Event()
        with ceilings.within(30, "an async watch to see a change"):
            async with trio.open_nursery() as nursery:

                async def follow() -> None:
                    async for event in files.watch():
                        events.append(event)
                        if event.path.startswith("b"):
                            seen.set()
                            return

                nursery.start_soon(follow)
                # A watch sees what changes once it is open: write new files until it sees one.
                for n in range(100):
                    await files.write(f"b{n}.txt", b"b")
                    with trio.move_on_after(0.3):
                        await seen.wait()
                    if seen.is_set():
                        break
        assert events[-1].type == "created" and events[-1].path.startswith("b"), events
        await files.delete("a.txt")
        with pytest.raises(NotFound):
            await files.read("a.txt")


async def test_a_download_unpacks_symlinks_as_they_are(wb: DaemonHandle, tmp_path: Path) -> None:
    """A virtualenv links to its interpreter by an absolute path: such a link writes nothing
    outside the directory, so it is unpacked as it is (as `tar x` does), not refused."""
    async with AsyncClient(wb.url, TOKEN) as client:
        with trio.fail_after(60):
            made = await client.run_bash(
                "mkdir -p venv/bin venv/lib && ln -s /usr/bin/python3 venv/bin/python "
                "&& ln -s lib venv/lib64 && echo x > venv/lib/x.txt",
                session_id="links",
            )
            assert made.exit_code == 0, made
            await client.files("links").download("venv", to=tmp_path / "venv")
            await client.files("links").download("venv", to=tmp_path / "venv")  # again, over it
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")]  # no temporary left
    assert os.readlink(tmp_path / "venv" / "bin" / "python") == "/usr/bin/python3"
    assert os.readlink(tmp_path / "venv" / "lib64") == "lib"
    assert (tmp_path / "venv" / "lib" / "x.txt").read_text() == "x\n"


def _tar(*members: tuple[str, str, str]) -> bytes:
    """A tar of (name, kind, what): a `file` holding `what`, a `link` (symlink) or a `hard` link
    to `what`, or a `dir`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, kind, what in members:
            info = tarfile.TarInfo(name)
            if kind in ("link", "hard"):
                info.type, info.linkname = (tarfile.SYMTYPE if kind == "link" else tarfile.LNKTYPE), what
                tar.addfile(info)
            elif kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size = len(what)
                tar.addfile(info, io.BytesIO(what.encode()))
    return out.getvalue()


@pytest.mark.parametrize(
    "archive",
    [
        _tar(("ok.txt", "file", "ok"), ("../out.txt", "file", "out")),
        _tar(("ok.txt", "file", "ok"), ("/tmp/out.txt", "file", "out")),
        _tar(("ok.txt", "file", "ok"), ("l", "link", "/tmp"), ("l/out.txt", "file", "out")),
        _tar(("ok.txt", "file", "ok"), ("l", "link", "/tmp/out.txt"), ("l", "file", "out")),
        b"no tar at all",
    ],
)
def test_an_archive_that_would_write_outside_is_refused_whole(archive: bytes, tmp_path: Path) -> None:
    with pytest.raises(WorkbenchError, match="cannot be unpacked into"):
        unpack(archive, tmp_path / "to")
    assert not (tmp_path / "to").exists()


def _tree(root: Path) -> dict[str, object]:
    """Everything under `root` as it is on disk, links not followed: each path's kind, mode and
    bytes (or where it points)."""
    seen: dict[str, object] = {}
    for top, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(top, name)
            info = os.lstat(path)
            if os.path.islink(path):
                seen[os.path.relpath(path, root)] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                seen[os.path.relpath(path, root)] = ("dir", info.st_mode)
            else:
                content = Path(path).read_bytes()
                seen[os.path.relpath(path, root)] = ("file", info.st_mode, info.st_ino, content)
    return seen


def test_a_download_unpacked_again_over_itself_replaces_it(tmp_path: Path) -> None:
    """An absolute symlink already there (a virtualenv's interpreter) is replaced as a link, not
    followed: the second download succeeds whole and writes nothing where the link points."""
    (tmp_path / "elsewhere").mkdir()
    python = tmp_path / "elsewhere" / "python3"
    python.write_bytes(b"the interpreter")

    def archive(version: str) -> bytes:
        return _tar(
            ("bin", "dir", ""),
            ("bin/a", "file", f"a{version}"),
            ("bin/python", "link", str(python)),
            ("bin/z", "file", f"z{version}"),
            ("lib64", "link", "bin"),
        )

    unpack(archive("1"), tmp_path / "to")
    unpack(archive("2"), tmp_path / "to")
    assert (tmp_path / "to" / "bin" / "a").read_text() == "a2"
    assert (tmp_path / "to" / "bin" / "z").read_text() == "z2"
    assert os.readlink(tmp_path / "to" / "bin" / "python") == str(python)
    assert os.readlink(tmp_path / "to" / "lib64") == "bin"
    assert python.read_bytes() == b"the interpreter"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "to"]  # no temporary left


def test_a_download_merges_into_what_is_there(tmp_path: Path) -> None:
    """Files and links of the same names are replaced (a link itself, not what it points to),
    directories merged, what the archive does not hold kept."""
    target = tmp_path / "to"
    (target / "keep").mkdir(parents=True)
    (target / "keep" / "mine.txt").write_text("mine")
    (target / "keep" / "old.txt").write_text("old")
    (tmp_path / "outside.txt").write_text("outside")
    os.symlink(tmp_path / "outside.txt", target / "f")  # a file of the archive replaces the link
    os.symlink("keep", target / "l")  # a link of the archive replaces it too
    archive = _tar(
        ("keep/old.txt", "file", "new"),
        ("keep/sub/x.txt", "file", "x"),
        ("f", "file", "f"),
        ("l", "link", "keep/sub"),
        ("keep/sub/hard", "hard", "keep/sub/x.txt"),
    )
    unpack(archive, target)
    assert (target / "keep" / "mine.txt").read_text() == "mine"
    assert (target / "keep" / "old.txt").read_text() == "new"
    assert (target / "keep" / "sub" / "x.txt").read_text() == "x"
    assert (target / "keep" / "sub" / "hard").samefile(target / "keep" / "sub" / "x.txt")
    assert not (target / "f").is_symlink() and (target / "f").read_text() == "f"
    assert os.readlink(target / "l") == "keep/sub"
    assert (tmp_path / "outside.txt").read_text() == "outside"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "to"]


def _hostile(tmp_path: Path) -> dict[str, bytes]:
    outside = str(tmp_path / "outside")
    return {
        # A hard link through a symlink of the archive: it would link to a file outside.
        "hard link through a link": _tar(
            ("ok.txt", "file", "ok"), ("a", "link", outside), ("h", "hard", "a/victim")
        ),
        # A hard link to a symlink of the archive (os.link follows it).
        "hard link to a link": _tar(
            ("ok.txt", "file", "ok"), ("a", "link", f"{outside}/victim"), ("h", "hard", "a")
        ),
        # A hard link to nothing in the archive.
        "hard link to no member": _tar(("ok.txt", "file", "ok"), ("h", "hard", "victim")),
        # A dangling link already there (d -> sub), the archive making sub a link to outside.
        "through a link on disk": _tar(
            ("ok.txt", "file", "ok"), ("sub", "link", outside), ("d/victim", "file", "owned")
        ),
        # A directory of the archive where a file is.
        "a directory on a file": _tar(("ok.txt", "file", "ok"), ("bin", "dir", ""), ("bin/x", "file", "x")),
        # A file of the archive where a directory is.
        "a file on a directory": _tar(("ok.txt", "file", "ok"), ("keep", "file", "x")),
    }


@pytest.mark.parametrize(
    "case",
    [
        "hard link through a link",
        "hard link to a link",
        "hard link to no member",
        "through a link on disk",
        "a directory on a file",
        "a file on a directory",
    ],
)
def test_a_hostile_archive_leaves_the_directory_as_it_was(case: str, tmp_path: Path) -> None:
    """Refused whole, as a WorkbenchError: nothing in the directory changed, nothing written
    outside it, no temporary left."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim").write_text("victim")
    target = tmp_path / "to"
    (target / "keep").mkdir(parents=True)
    (target / "keep" / "mine.txt").write_text("mine")
    (target / "ok.txt").write_text("before")
    (target / "bin").write_text("a file")
    os.symlink("sub", target / "d")  # dangling
    before, outside_before = _tree(target), _tree(tmp_path / "outside")
    with pytest.raises(WorkbenchError, match="cannot be unpacked into"):
        unpack(_hostile(tmp_path)[case], target)
    assert _tree(target) == before
    assert _tree(tmp_path / "outside") == outside_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "to"]


def test_a_clash_names_the_path(tmp_path: Path) -> None:
    (tmp_path / "to").mkdir()
    (tmp_path / "to" / "bin").write_text("a file")
    with pytest.raises(WorkbenchError, match="'bin'"):
        unpack(_tar(("bin", "dir", ""), ("bin/x", "file", "x")), tmp_path / "to")


async def test_an_absolute_path_is_refused_not_taken_as_a_relative_one(wb: DaemonHandle) -> None:
    """`/etc/y` is `InvalidRequest`, as documented, for every method that takes a path (read,
    write, list and delete wrote, read and removed `etc/y` in the workspace); nothing changes."""
    async with AsyncClient(wb.url, TOKEN) as wb_client:
        files = wb_client.files("abs")
        await files.write("keep", b"k")
        for call in (
            lambda: files.write("/etc/y", b"x"),
            lambda: files.read("/keep"),
            lambda: files.list("/"),
            lambda: files.delete("/keep"),
        ):
            with pytest.raises(InvalidRequest, match="absolute"):
                await call()
        assert [e.path for e in (await files.list(depth=3)).entries] == ["keep"]
