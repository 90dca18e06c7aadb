"""Connections are not runs, and they are not leaks either: what a connection costs the daemon ends
when the connection does, and a burst of them is served, not dropped.

The daemon runs as a process of its own, so that its sockets can be counted (psutil) apart from
the test's.
"""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import trio

from tests.reliability.conftest import DaemonProcess

Factory = Callable[..., DaemonProcess]

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: workbench\r\n\r\n"
HEALTHZ_CLOSE = b"GET /healthz HTTP/1.1\r\nHost: workbench\r\nConnection: close\r\n\r\n"


def held(daemon: DaemonProcess) -> int:
    """Connections of the daemon's port that it still holds open (the listening socket aside)."""
    assert daemon.proc is not None
    return sum(
        1
        for c in psutil.Process(daemon.proc.pid).net_connections(kind="tcp")
        if c.status != psutil.CONN_LISTEN and c.laddr and c.laddr.port == daemon.port
    )


def wait_released(daemon: DaemonProcess, within_s: float) -> float:
    """Seconds until the daemon holds no connection; fails after `within_s`."""
    start = time.monotonic()
    while held(daemon):
        assert time.monotonic() - start < within_s, f"the daemon still holds {held(daemon)} connections"
        time.sleep(0.05)
    return time.monotonic() - start


@contextlib.contextmanager
def fd_soft_limit(limit: int) -> Iterator[None]:
    """Processes started inside the block begin with at most `limit` file descriptors (soft)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def healthy_within(daemon: DaemonProcess, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", daemon.port), timeout=2) as s:
                s.sendall(HEALTHZ_CLOSE)
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"the API was unreachable for {within_s} s"
        time.sleep(0.05)


def test_connections_the_client_closed_are_released_at_once(daemon_process: Factory) -> None:
    """1,100 connect-and-close calls on a daemon started under a 1,024 descriptor limit: none is held
    after its client left (not for a keep-alive period), and the API stays reachable."""
    daemon = daemon_process()
    with fd_soft_limit(1024):
        daemon.start()
    healthy_within(daemon, 10)
    assert daemon.proc is not None
    soft, hard = psutil.Process(daemon.proc.pid).rlimit(psutil.RLIMIT_NOFILE)
    assert soft == hard, "the daemon raised its soft descriptor limit to the hard one at start"
    for _ in range(1100):
        socket.create_connection(("127.0.0.1", daemon.port), timeout=10).close()
    healthy_within(daemon, 5)
    time.sleep(0.5)
    after_close = held(daemon)
    print(f"\nconnections held 0.5 s after 1,100 connect-and-close calls: {after_close}")
    wait_released(daemon, 5)


def test_half_open_and_idle_connections_are_released(daemon_process: Factory) -> None:
    """A client that sends a request and shuts its side, or sends half a request and nothing more,
    costs the daemon no socket for long: the first at once, the second after the header timeout."""
    daemon = daemon_process()
    daemon.start()
    half_open = []
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
        s.sendall(HEALTHZ)
        s.shutdown(socket.SHUT_WR)
        half_open.append(s)
    took = wait_released(daemon, 5)
    print(f"\n50 half-open connections released after {took:.2f} s")
    for s in half_open:
        s.close()
    stalled = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
    stalled.sendall(b"GET /healthz HTTP/1.1\r\nHost")
    try:
        stalled.settimeout(30)
        # The daemon gives up on headers that never end: it closes (EOF) well before 75 s.
        assert stalled.recv(4096) == b""
    finally:
        stalled.close()


def test_connection_close_is_honoured(daemon_process: Factory) -> None:
    """`Connection: close`: the daemon answers, then closes the connection itself."""
    daemon = daemon_process()
    daemon.start()
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
            s.sendall(HEALTHZ_CLOSE)
            s.settimeout(5)
            data = b""
            while chunk := s.recv(65536):  # a timeout here is the daemon keeping it open
                data += chunk
            assert data.startswith(b"HTTP/1.1 200") and data.endswith(b'{"status": "ok"}'), data
    wait_released(daemon, 5)


async def read_response(stream: trio.SocketStream) -> bytes:
    """One whole HTTP response (headers and a Content-Length body), however it is split."""
    data = b""
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            if len(body) >= length:
                return data
        chunk = await stream.receive_some(65536)
        if not chunk:
            return data
        data += chunk


@pytest.mark.timeout(240)
def test_a_burst_of_1000_connections_loses_none(tmp_path: Path) -> None:
    """1,000 clients connect at once and each asks once: every one is answered, and the kernel
    dropped none at the daemon's listen queue (counted in a network namespace of the test's own,
    where the daemon and its clients are alone)."""
    prefix = ["unshare", "--net"]
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "tests.reliability.burst", str(tmp_path / "data"), "1000"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"\nburst of 1,000 connections: {figures['answered']} answered, {figures['lost']} lost, "
        f"{figures['dropped']} dropped at the listen queue (kernel drop counters), in {figures['seconds']} s"
    )
    assert figures["lost"] == 0, figures
    assert figures["dropped"] == 0, figures
    assert figures["answered"] == 1000, figures


async def test_connections_past_the_limit_get_a_clear_503(make_daemon: Any) -> None:
    """WORKBENCH_MAX_CONNECTIONS: one connection past the limit is answered 503 `unavailable` (the
    JSON error, saying why) and closed; once one closes, the next is served."""
    wb = await make_daemon(max_connections=4)
    port = int(wb.url.rsplit(":", 1)[1])
    held_open = [await trio.open_tcp_stream("127.0.0.1", port) for _ in range(4)]
    try:
        with trio.fail_after(30):
            async with await trio.open_tcp_stream("127.0.0.1", port) as extra:
                await extra.send_all(HEALTHZ)
                answer = await read_response(extra)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), answer
        error = json.loads(body)["error"]
        assert error["code"] == "unavailable" and "WORKBENCH_MAX_CONNECTIONS" in error["message"]
    finally:
        for stream in held_open[1:]:
            await stream.aclose()
    with trio.fail_after(30):
        while True:  # the daemon notices the closes soon; until then it may still refuse
            async with await trio.open_tcp_stream("127.0.0.1", port) as again:
                await again.send_all(HEALTHZ)
                if (await read_response(again)).startswith(b"HTTP/1.1 200"):
                    break
            await trio.sleep(0.05)
    await held_open[0].aclose()
