"""`workbench serve --unix-socket PATH` never removes what is not its own: another daemon's live
socket, a file, a directory. A stale socket file (its daemon killed) is replaced, and a daemon
stopping removes only the socket it made."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio

from tests import ceilings
from tests.cli.test_serve import SERVE, clean_env


def flags(data_dir: Path, sock: Path, bind: str = "127.0.0.1:0") -> list[str]:
    return ["--bind", bind, "--data-dir", str(data_dir), "--unix-socket", str(sock)]


@asynccontextmanager
async def serving(home: Path, *args: str) -> AsyncIterator[tuple[trio.Process, str]]:
    """A `workbench serve` process with `args`, once it listens: (process, its TCP address)."""
    process = await trio.lowlevel.open_process([*SERVE, *args], env=clean_env(home), stderr=subprocess.PIPE)
    assert process.stderr is not None
    log = bytearray()
    try:
        with ceilings.within(60, "the daemon's banner"):
            while b"data dir" not in log:
                chunk = await process.stderr.receive_some()
                assert chunk, log.decode()
                log += chunk
        found = re.search(rb"listening on http://(127\.0\.0\.1:\d+)", log)
        assert found, log.decode()
        yield process, found[1].decode()
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        with ceilings.within(60, "the daemon to stop"):
            await process.wait()


async def refused(home: Path, *args: str) -> str:
    """Run a `workbench serve` that must be refused at start: its one line (exit status 2)."""
    with ceilings.within(60, "`workbench serve` to refuse its start"):
        done = await trio.run_process([*SERVE, *args], env=clean_env(home), check=False, capture_stderr=True)
    text = done.stderr.decode()
    assert done.returncode == 2, text
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


async def answers(sock: Path) -> bool:
    """Whether a daemon answers `GET /healthz` on the Unix socket `sock`."""
    transport = httpx.AsyncHTTPTransport(uds=str(sock))
    async with httpx.AsyncClient(transport=transport, base_url="http://daemon") as client:
        return (await client.get("/healthz")).status_code == 200


async def test_a_refused_second_daemon_leaves_the_first_ones_socket(tmp_path: Path) -> None:
    """Refused on its data dir, on its busy port, or for the socket itself: the socket the first
    daemon listens on stays, and the first daemon answers on it."""
    data, other, sock = tmp_path / "data", tmp_path / "other", tmp_path / "wb.sock"
    async with serving(tmp_path, *flags(data, sock)) as (_first, address):
        listens = (
            f"workbench: another process listens on the Unix socket {sock}: stop it first "
            "or choose another --unix-socket\n"
        )
        busy = f"workbench: cannot listen on {address}: Address already in use\n"
        for data_dir, bind, said in (
            (data, "127.0.0.1:0", listens),
            (other, address, busy),
            (other, "127.0.0.1:0", listens),
        ):
            line = await refused(tmp_path, *flags(data_dir, sock, bind))
            assert line == said
            assert sock.is_socket() and await answers(sock), line
        # Refused for its data dir with a socket of its own: it removes that one, and only that.
        mine = tmp_path / "mine.sock"
        line = await refused(tmp_path, *flags(data, mine))
        assert "is using the data dir" in line
        assert not mine.exists() and await answers(sock)


async def test_what_is_not_a_socket_is_refused_and_kept(tmp_path: Path) -> None:
    precious, directory = tmp_path / "precious", tmp_path / "a-dir"
    precious.write_text("precious\n")
    directory.mkdir()
    (directory / "inside").write_text("kept\n")
    for path, what in ((precious, "a file"), (directory, "a directory")):
        line = await refused(tmp_path, *flags(tmp_path / "data", path))
        assert line == f"workbench: --unix-socket {path} is {what}, not a socket: it is not replaced\n"
    assert precious.read_text() == "precious\n" and (directory / "inside").read_text() == "kept\n"
    assert not (tmp_path / "data").exists(), "a refused start makes nothing"


async def test_a_stale_socket_is_replaced_and_a_stop_removes_only_its_own(tmp_path: Path) -> None:
    sock = tmp_path / "wb.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))  # a socket file nothing listens on, as a killed daemon leaves
    stale.close()
    async with serving(tmp_path, *flags(tmp_path / "one", sock)) as (first, _address):
        assert await answers(sock)
        # Someone removes it, and a second daemon listens there: the first one stopping leaves it.
        sock.unlink()
        async with serving(tmp_path, *flags(tmp_path / "two", sock)):
            first.send_signal(signal.SIGTERM)
            with ceilings.within(60, "the first daemon to stop"):
                assert await first.wait() == 0
            assert sock.is_socket() and await answers(sock)
        assert not sock.exists(), "the second daemon removes its own socket"
