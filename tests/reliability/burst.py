"""A burst of connections at a daemon of its own, in a network namespace of its own.

Run as `unshare --net python -m tests.reliability.burst DATA_DIR N` (root): the kernel's counters
of connections dropped at a full listen queue (`TcpExt: ListenOverflows ListenDrops`) are then
this daemon's alone. Prints one JSON line: answered, lost, dropped at the queue, seconds.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import trio

from tests.conftest import TOKEN

PORT = 8787
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: workbench\r\n\r\n"


def queue_drops() -> int:
    """Connections this network namespace's listen queues dropped so far."""
    lines = Path("/proc/net/netstat").read_text().splitlines()
    for names, values in zip(lines[::2], lines[1::2], strict=True):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], (int(v) for v in values.split()[1:]), strict=True))
            return table["ListenOverflows"] + table["ListenDrops"]
    raise RuntimeError("no TcpExt counters in /proc/net/netstat")


async def read_response(stream: trio.SocketStream) -> bytes:
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


async def burst(n: int) -> dict[str, object]:
    answered = 0
    lost: list[str] = []

    async def one(i: int) -> None:
        nonlocal answered
        try:
            with trio.fail_after(60):
                async with await trio.open_tcp_stream("127.0.0.1", PORT) as stream:
                    await stream.send_all(REQUEST)
                    data = await read_response(stream)
            if data.startswith(b"HTTP/1.1 200"):
                answered += 1
            else:
                lost.append(f"{i}: {data[:60]!r}")
        except (OSError, trio.BrokenResourceError, trio.TooSlowError) as exc:
            lost.append(f"{i}: {exc!r}")

    before = queue_drops()
    started = time.monotonic()
    with trio.fail_after(150):
        async with trio.open_nursery() as nursery:
            for i in range(n):
                nursery.start_soon(one, i)
    return {
        "answered": answered,
        "lost": len(lost),
        "examples": lost[:5],
        "dropped": queue_drops() - before,
        "seconds": round(time.monotonic() - started, 1),
    }


def healthy() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
            s.sendall(REQUEST)
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def main(data_dir: str, n: int) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update({"WORKBENCH_TOKEN": TOKEN, "WORKBENCH_DATA_DIR": data_dir})
    log = open(Path(data_dir).parent / "burst-daemon.log", "ab")  # noqa: SIM115 (closed below)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--bind", f"127.0.0.1:{PORT}"],
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 60
        while not healthy():
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start (exit status {daemon.poll()})")
            time.sleep(0.1)
        print(json.dumps(trio.run(burst, n)), flush=True)
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
