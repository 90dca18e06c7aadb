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
from workbench import AsyncClient, Client, NotFound, PreconditionFailed, WorkbenchError
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
    assert os.readlink(tmp_path / "venv" / "bin" / "python") == "/usr/bin/python3"
    assert os.readlink(tmp_path / "venv" / "lib64") == "lib"
    assert (tmp_path / "venv" / "lib" / "x.txt").read_text() == "x\n"


def _tar(*members: tuple[str, str, str]) -> bytes:
    """A tar of (name, kind, what): a `file` holding `what`, or a `link` to `what`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, kind, what in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, what
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
