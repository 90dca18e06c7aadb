"""The daemon side: a trio client of the shim, safe to share between many tasks."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, final

import trio

from ._detect import Capabilities
from ._errors import ERROR_TYPES, SandboxError, ShimRefused, SupervisorLost, UnknownExecution
from ._model import ChildInfo, ExitStatus, KnownChild, SpawnSpec
from ._protocol import (
    EXIT_LOCKED,
    EXIT_READY,
    LOG_NAME,
    PROTOCOL_VERSION,
    SOCKET_NAME,
    LineBuffer,
    ProtocolError,
    decode,
    encode,
)

# A shim that is exiting (idle) or starting in another process holds the lock for a few
# milliseconds; retrying this many times, this far apart, outlasts that.
_CONNECT_ATTEMPTS = 200
_RETRY_DELAY_S = 0.025


class _Child:
    """What the client knows of one execution, with events for the tasks waiting on it."""

    def __init__(self, known: KnownChild) -> None:
        self.info = known.info
        self.status: ExitStatus | None = None
        self.empty = False
        self.exited = trio.Event()
        self.emptied = trio.Event()
        self.update(known.status, known.empty)

    def update(self, status: ExitStatus | None, empty: bool) -> None:
        if status is not None:
            self.status = status
            self.exited.set()
        if empty and self.status is not None:
            self.empty = True
            self.emptied.set()


class _Reply:
    def __init__(self) -> None:
        self.done = trio.Event()
        self.message: dict[str, Any] | None = None


@final
class Supervisor:
    """A connection to the shim of one run dir. Get one from `open_supervisor`.

    Every method may be called from many tasks at once. When the connection breaks (the shim
    died) or is closed, pending and later calls raise SupervisorLost; the executions go on.
    """

    def __init__(self, stream: trio.abc.Stream, lines: LineBuffer, hello: dict[str, Any]) -> None:
        self._stream = stream
        self._lines = lines
        self._send_lock = trio.Lock()
        self._pending: dict[int, _Reply] = {}
        self._next_id = 1
        self._lost: str | None = None
        self._children: dict[str, _Child] = {}
        self.capabilities: Capabilities = Capabilities.from_dict(hello["capabilities"])
        """What the shim's machine allows (as probed by the shim)."""
        self.shim_pid: int = int(hello["shimPid"])
        """The shim's process id."""
        for data in hello["children"]:
            self._remember(KnownChild.from_dict(data))

    # -- the API ----------------------------------------------------------------------------

    async def spawn(self, spec: SpawnSpec) -> ChildInfo:
        """Start an execution; returns once its leader has exec'd and proc.json is written.

        AUTO containment is resolved with `capabilities`. The call is shielded from
        cancellation (it takes milliseconds), so the caller always learns whether it started.

        Raises:
            SpawnError: it could not start (bad cwd, program not found, exec failed, name
                taken, ...); nothing of it is left: no process, no cgroup.
            ContainmentUnavailable: the spec forces a containment this machine lacks.
            SupervisorLost: the shim is gone.
        """
        spec = dataclasses.replace(spec, containment=self.capabilities.resolve(spec.containment))
        with trio.CancelScope(shield=True):
            reply = await self._request({"op": "spawn", "spec": spec.to_dict()})
        return ChildInfo.from_dict(reply["child"]["info"])

    async def wait_exited(self, name: str) -> ExitStatus:
        """Wait for the leader's exit; returns its status (UNKNOWN_EXIT for some adopted trees).

        Raises:
            UnknownExecution: no such execution is held.
            SupervisorLost: the shim went away before the leader's exit was learnt.
        """
        child = self._child(name)
        await child.exited.wait()
        if child.status is None:
            raise SupervisorLost(self._lost)
        return child.status

    async def wait_empty(self, name: str) -> None:
        """Wait until the leader exited and nothing of its tree is alive (per the containment).

        Raises:
            UnknownExecution: no such execution is held.
            SupervisorLost: the shim went away before that was learnt.
        """
        child = self._child(name)
        await child.emptied.wait()
        if not child.empty:
            raise SupervisorLost(self._lost)

    async def signal(self, name: str, sig: int) -> None:
        """Send `sig` to every process of the tree; SIGKILL is the containment's hard kill.

        Killing returns at once; `wait_empty` says when the tree is dead. A tree that is
        already empty is not an error.
        """
        await self._request({"op": "signal", "name": name, "signal": int(sig)})

    async def release(self, name: str) -> None:
        """Forget an execution whose tree is empty, and remove its cgroups.

        Raises:
            NotEmpty: its leader or some process of its tree still runs.
        """
        await self._request({"op": "release", "name": name})
        self._children.pop(name, None)

    def known(self) -> dict[str, KnownChild]:
        """Every execution the shim holds: identity, exit status if the leader exited (also
        while no daemon was connected), and whether its tree is empty."""
        return {name: KnownChild(c.info, c.status, c.empty) for name, c in self._children.items()}

    async def adopt(self, info: ChildInfo) -> bool:
        """Take over a tree started by a shim that died, by its identity.

        The tree can then be signalled and waited on; its exit status is the one the old shim
        recorded in status.json, else UNKNOWN_EXIT. An execution this shim already holds is
        simply confirmed.

        Returns:
            False if nothing of it is alive any more (then read its status file).
        """
        reply = await self._request({"op": "adopt", "info": info.to_dict()})
        return bool(reply["adopted"])

    async def shutdown(self) -> None:
        """Ask the shim to exit now. Only allowed once every tree it holds is empty.

        Raises:
            SandboxError: some execution still runs.
        """
        await self._request({"op": "shutdown"})

    # -- the connection ---------------------------------------------------------------------

    def _child(self, name: str) -> _Child:
        child = self._children.get(name)
        if child is None:
            raise UnknownExecution(f"no execution named {name!r} is held")
        return child

    def _remember(self, known: KnownChild) -> None:
        child = self._children.get(known.info.name)
        if child is None or child.info != known.info:
            self._children[known.info.name] = _Child(known)
        else:
            child.update(known.status, known.empty)

    async def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._lost is not None:
            raise SupervisorLost(self._lost)
        request_id = self._next_id
        self._next_id += 1
        reply = _Reply()
        self._pending[request_id] = reply
        try:
            data = encode({"id": request_id, **message})
            # A cancelled send_all could leave half a line on the socket: never cancel it.
            with trio.CancelScope(shield=True):
                async with self._send_lock:
                    try:
                        await self._stream.send_all(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                        self._lose(f"connection to the shim lost: {e}")
            await reply.done.wait()
        finally:
            del self._pending[request_id]
        if reply.message is None:
            raise SupervisorLost(self._lost)
        if not reply.message.get("ok"):
            raise _error(reply.message.get("error"))
        return reply.message

    async def _read_loop(self) -> None:
        reason = "the shim closed the connection"
        try:
            while True:
                data = await self._stream.receive_some(1 << 16)
                if not data:
                    break
                for line in self._lines.feed(data):
                    self._dispatch(decode(line))
        except trio.ClosedResourceError:
            reason = "the supervisor was closed"
        except (trio.BrokenResourceError, OSError) as e:
            reason = f"connection to the shim lost: {e}"
        except (ProtocolError, KeyError, TypeError, ValueError) as e:
            # A malformed message must fail the waits, not the daemon's supervisor block.
            reason = f"the shim sent something unexpected: {e!r}"
        finally:
            self._lose(reason)

    def _dispatch(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if event is None:
            # A reply that carries an execution registers it before the caller resumes, so
            # that events about it which follow in the stream are never missed.
            if message.get("ok") and message.get("child"):
                self._remember(KnownChild.from_dict(message["child"]))
            reply = self._pending.get(message.get("id", -1))
            if reply is not None:
                reply.message = message
                reply.done.set()
        elif event in ("exited", "empty"):
            child = self._children.get(str(message.get("name")))
            if child is not None:
                status = message.get("status")
                child.update(
                    ExitStatus.from_dict(status) if status else None, event == "empty" or message["empty"]
                )
        elif event == "refused":
            self._lose(str(message.get("error", {}).get("message")))

    def _lose(self, reason: str) -> None:
        if self._lost is not None:
            return
        self._lost = reason
        for reply in self._pending.values():
            reply.done.set()
        for child in self._children.values():
            child.exited.set()
            child.emptied.set()

    async def _close(self) -> None:
        self._lose("the supervisor was closed")
        with trio.CancelScope(shield=True):
            await self._stream.aclose()


def _error(data: Any) -> SandboxError:
    if not isinstance(data, dict):
        return SandboxError(f"malformed error from the shim: {data!r}")
    cls = ERROR_TYPES.get(str(data.get("type")), SandboxError)
    return cls(str(data.get("message")))


@asynccontextmanager
async def open_supervisor(
    run_dir: str | os.PathLike[str], *, python: str = sys.executable, idle_linger: float = 30.0
) -> AsyncIterator[Supervisor]:
    """Connect to the shim of `run_dir`, starting one if none runs.

    A live shim is adopted with everything it holds (see `Supervisor.known`). Leaving the
    block closes the connection only: the shim and the executions keep running, and a later
    `open_supervisor` finds them again. A shim exits by itself once no client is connected
    and nothing it holds is alive for `idle_linger` seconds.

    Args:
        run_dir: the directory of the shim's socket, lock, pid file and log (created 0700).
        python: the interpreter that runs a new shim (an absolute path; never a PATH shim).
        idle_linger: for a shim started now: how long it waits, idle, for a client to return.

    Raises:
        ShimRefused: another daemon is connected to that shim.
        SandboxError: no shim could be started (the message quotes its log).
    """
    directory = _prepare_run_dir(run_dir)
    stream, lines, hello = await _connect(directory, python, idle_linger)
    supervisor = Supervisor(stream, lines, hello)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(supervisor._read_loop)
        try:
            yield supervisor
        finally:
            await supervisor._close()
            nursery.cancel_scope.cancel()


def _prepare_run_dir(run_dir: str | os.PathLike[str]) -> str:
    directory = os.path.abspath(os.fspath(run_dir))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return directory


async def _connect(
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
    if len(received) > 1:
        raise ProtocolError("the shim spoke before answering hello")
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
