"""Reaching the shim of a run dir: connect to it, or start one, and say hello."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import trio

from ._errors import SandboxError, ShimRefused
from ._protocol import (
    EXIT_LOCKED,
    EXIT_READY,
    LOG_NAME,
    PROTOCOL_VERSION,
    SOCKET_NAME,
    LineBuffer,
    decode,
    encode,
)

# A shim that is exiting (idle) or starting in another process holds the lock for a few
# milliseconds; retrying this many times, this far apart, outlasts that.
_CONNECT_ATTEMPTS = 200
_RETRY_DELAY_S = 0.025


def prepare_run_dir(run_dir: str | os.PathLike[str]) -> str:
    directory = os.path.abspath(os.fspath(run_dir))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return directory


async def connect(
    run_dir: str, python: str, idle_linger: float
) -> tuple[trio.SocketStream, LineBuffer, dict[str, Any]]:
    for _ in range(_CONNECT_ATTEMPTS):
        try:
            stream = await _open_socket(run_dir)
        except (FileNotFoundError, ConnectionRefusedError):
            code = await _start_shim(run_dir, python, idle_linger)
            if code == EXIT_LOCKED:
                await trio.sleep(_RETRY_DELAY_S)
            elif code != EXIT_READY:
                raise SandboxError(f"the shim failed to start (exit {code}): {_log_tail(run_dir)}") from None
            continue
        lines = LineBuffer()
        try:
            hello = await _hello(stream, lines)
        except (trio.BrokenResourceError, EOFError):
            # Accepted by a shim that was exiting (idle) at that moment: start over.
            await stream.aclose()
            await trio.sleep(_RETRY_DELAY_S)
            continue
        except BaseException:
            await stream.aclose()
            raise
        return stream, lines, hello
    raise SandboxError(f"could not reach a shim in {run_dir}: {_log_tail(run_dir)}")


async def _open_socket(run_dir: str) -> trio.SocketStream:
    path = os.path.join(run_dir, SOCKET_NAME)
    if len(os.fsencode(path)) < 100:
        return await trio.open_unix_socket(path)
    # A socket address holds at most 107 bytes: go through a short /proc path to the dir.
    fd = os.open(run_dir, os.O_PATH | os.O_CLOEXEC)
    try:
        return await trio.open_unix_socket(f"/proc/self/fd/{fd}/{SOCKET_NAME}")
    finally:
        os.close(fd)


async def _hello(stream: trio.SocketStream, lines: LineBuffer) -> dict[str, Any]:
    await stream.send_all(encode({"id": 0, "op": "hello", "protocol": PROTOCOL_VERSION}))
    while True:
        data = await stream.receive_some(1 << 16)
        if not data:
            raise EOFError
        received = lines.feed(data)
        if received:
            break
    message = decode(received[0])
    # Events about the trees it names may follow the answer in the same read: the supervisor
    # reads them next, once it has taken in the answer.
    lines.unread(received[1:])
    if message.get("event") == "refused" or not message.get("ok"):
        error = message.get("error") or {}
        raise ShimRefused(str(error.get("message", "the shim refused the connection")))
    return message


def _shim_env() -> dict[str, str]:
    # Never the daemon's environment (it holds secrets): just enough to import this package.
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {"PATH": os.defpath, "PYTHONPATH": package_parent}


async def _start_shim(run_dir: str, python: str, idle_linger: float) -> int:
    log = os.open(
        os.path.join(run_dir, LOG_NAME), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
    )
    try:
        process = await trio.run_process(
            [python, "-s", "-m", "sandbox.shim", run_dir, "--idle-linger", repr(idle_linger)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            env=_shim_env(),
            cwd="/",
            check=False,
        )
    except OSError as e:  # the interpreter is gone (a virtualenv made again under a daemon)
        raise SandboxError(f"the shim could not be started with {python}: {e.strerror or e}") from None
    finally:
        os.close(log)
    return process.returncode


def _log_tail(run_dir: str) -> str:
    try:
        with open(os.path.join(run_dir, LOG_NAME), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2000))
            return f.read().decode(errors="replace").strip()[-1000:] or "(empty log)"
    except OSError as e:
        return f"(no log: {e.strerror})"
