"""Promise 7 for files, against an execution that changes its workspace while a file route works
in it: whatever it swaps in meanwhile, nothing outside the workspace is read, changed or made."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import trio

from tests.conftest import DaemonHandle

FILES = "/v1/sessions/work/files"


async def temp_file(directory: Path) -> str:
    """The name of the temporary file a write is streaming into, once there is one."""
    with trio.fail_after(10):
        while True:
            found = [n for n in os.listdir(directory) if n.startswith(".workbench-") and n.endswith(".part")]
            if found:
                return found[0]
            await trio.sleep(0.01)


async def test_a_temporary_file_swapped_for_a_symlink_mid_write_changes_nothing_outside(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """The write's temporary file sits in the workspace while the body streams in: an execution
    may put a symlink to a host file in its place. The file it replaces keeps its mode through the
    write's own descriptor, never through that name, and the rename of a part that is no longer
    the write's own is refused."""
    host = tmp_path / "host-file"
    host.write_bytes(b"host\n")
    host.chmod(0o600)
    assert (await wb.client.put(f"{FILES}/run.sh", content=b"one\n")).status_code == 201
    ws = wb.settings.layout.workspace("admin", "work")
    (ws / "run.sh").chmod(0o755)
    swapped = trio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b"two"
        await swapped.wait()
        yield b"\n"

    async with trio.open_nursery() as nursery:
        answers: list[httpx.Response] = []

        async def write() -> None:
            answers.append(await wb.client.put(f"{FILES}/run.sh", content=body()))

        nursery.start_soon(write)
        name = await temp_file(ws)
        os.unlink(ws / name)
        os.symlink(host, ws / name)
        swapped.set()
    (response,) = answers
    assert stat.S_IMODE(host.stat().st_mode) == 0o600 and host.read_bytes() == b"host\n"
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "conflict"
    assert (ws / "run.sh").read_bytes() == b"one\n" and stat.S_IMODE((ws / "run.sh").stat().st_mode) == 0o755
    assert not [n for n in os.listdir(ws) if n.endswith(".part")]
