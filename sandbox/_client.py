"""The daemon side: a trio client of the shim, safe to share between many tasks."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, final

import trio

from ._client_state import Child as _Child
from ._client_state import Reply as _Reply
from ._client_state import error as _error
from ._connect import connect, prepare_run_dir
from ._detect import Capabilities
from ._errors import SandboxError, SupervisorLost, UnknownExecution
from ._files import read_proc_file, read_status_file
from ._model import UNKNOWN_EXIT, ChildInfo, ExitStatus, KnownChild, SpawnSpec
from ._protocol import LineBuffer, ProtocolError, decode, encode

#: How a replacement shim is reached: (stream, lines, hello), as `connect` returns them.
Reconnect = Callable[[], Awaitable[tuple[trio.SocketStream, LineBuffer, dict[str, Any]]]]

#: Between failed attempts to start a replacement shim: from the first to the last delay.
_REPLACE_DELAYS_S = (0.02, 1.0)


@final
class Supervisor:
    """A connection to the shim of one run dir. Get one from `open_supervisor`.

    Every method may be called from many tasks at once. When the connection breaks (the shim
    died) or is closed, pending and later calls raise SupervisorLost; the executions go on.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        lines: LineBuffer,
        hello: dict[str, Any],
        reconnect: Reconnect | None = None,
    ) -> None:
        self._stream = stream
        self._lines = lines
        self._send_lock = trio.Lock()
        self._pending: dict[int, _Reply] = {}
        self._next_id = 1
        self._lost: str | None = None
        self._closing = False
        self._reconnect = reconnect
        self._generation = 0  # one more per replacement shim
        self._ready = trio.Event()  # clear while a replacement shim takes the trees back
        self._ready.set()
        self._children: dict[str, _Child] = {}
        self._held: set[str] = set()  # the names the current shim said hello with
        self.degraded: str | None = None
        """Why the supervisor cannot serve right now (a dead shim being replaced), else None."""
        self.replacements = 0
        """How many dead shims were replaced."""
        self._greet(hello)

    def _greet(self, hello: dict[str, Any]) -> None:
        self.capabilities: Capabilities = Capabilities.from_dict(hello["capabilities"])
        """What the shim's machine allows (as probed by the shim)."""
        self.shim_pid: int = int(hello["shimPid"])
        """The shim's process id."""
        self._held = set()
        for data in hello["children"]:
            known = KnownChild.from_dict(data)
            self._held.add(known.info.name)
            self._remember(known)

    @property
    def problem(self) -> str | None:
        """None while the supervisor serves; else why not (being replaced, or lost for good)."""
        return self._lost or self.degraded

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
        request = {"op": "spawn", "spec": spec.to_dict()}
        with trio.CancelScope(shield=True):
            try:
                reply = await self._request(request, retry=False)
            except SupervisorLost:
                if self._reconnect is None or self._lost is not None:
                    raise
                # The shim died while starting it: it started it if it wrote its proc file.
                await self._wait_ready()
                info = read_proc_file(spec.dir)
                if info is not None and info.name == spec.name:
                    await self._take_back(info)
                    return info
                reply = await self._request(request)
        return ChildInfo.from_dict(reply["child"]["info"])

    async def claim(
        self,
        name: str,
        spec: SpawnSpec,
        data: bytes,
        binds: Sequence[tuple[str, bool]] = (),
        same: Sequence[str] = (),
    ) -> ChildInfo:
        """Make the waiting pre-started leader `name` the execution `spec` (see the protocol's
        ``claim``): renamed, its proc.json in `spec.dir`, `data` then an end of file on its stdin.
        A pre-started sandbox (`SpawnSpec.claim_socket`) is first given the host files `binds`
        (path, read-only) at their own paths, once the paths `same` are checked to be the files
        it bound when it started; a failure there kills it.

        Shielded from cancellation like `spawn`. Not retried on a replacement shim (whose
        adopted leaders have no stdin to claim them by).

        Raises:
            SpawnError: it cannot be claimed for `spec`; it is left as it was (start `spec`
                with `spawn` instead).
            SupervisorLost: the shim is gone.
        """
        spec = dataclasses.replace(spec, containment=self.capabilities.resolve(spec.containment))
        request = {
            "op": "claim",
            "name": name,
            "spec": spec.to_dict(),
            "input": base64.b64encode(data).decode(),
            "binds": [[path, readonly] for path, readonly in binds],
            "same": list(same),
        }
        with trio.CancelScope(shield=True):
            reply = await self._request(request, retry=False)
        return ChildInfo.from_dict(reply["child"]["info"])

    async def wait_exited(self, name: str) -> ExitStatus:
        """Wait for the leader's exit; returns its status (UNKNOWN_EXIT for some adopted trees).

        Raises:
            UnknownExecution: no such execution is held.
            SupervisorLost: the shim went away before the leader's exit was learnt.
        """
        child = self._child(name)
        await child.exited.wait()
        return self._exit_of(child)

    def exit_status(self, name: str) -> ExitStatus | None:
        """The leader's exit status once it is known (as `wait_exited` returns it), without
        waiting; None while it is not.

        Raises:
            UnknownExecution: no such execution is held.
            SupervisorLost: the shim went away before the leader's exit was learnt.
        """
        child = self._child(name)
        return self._exit_of(child) if child.exited.is_set() else None

    def _exit_of(self, child: _Child) -> ExitStatus:
        """The status of a child whose `exited` is set; SupervisorLost if the shim was lost first."""
        if child.status is None:
            raise SupervisorLost(self._lost)
        return child.status

    def when_exited(self, name: str, callback: Callable[[], None]) -> None:
        """Call `callback()` (on the trio thread, at once if it already has) once the leader's
        exit is known, or the shim was lost before it was: then `wait_exited` returns at once.
        Costs no task, where a task of its own would await `wait_exited`.

        Raises:
            UnknownExecution: no such execution is held.
        """
        child = self._child(name)
        if child.exited.is_set():
            callback()
        else:
            child.on_exit.append(callback)

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

    async def signal(self, name: str, sig: int, *, foreground: bool = False) -> None:
        """Send `sig` to every process of the tree; SIGKILL is the containment's hard kill.

        Killing returns at once; `wait_empty` says when the tree is dead. A tree that is
        already empty is not an error. `foreground`: to the foreground process group of its
        terminal instead, as a key typed there would (the whole tree where it has none).
        """
        message: dict[str, Any] = {"op": "signal", "name": name, "signal": int(sig)}
        if foreground:
            message["foreground"] = True
        await self._request(message)

    async def send_input(self, name: str, data: bytes, *, eof: bool = False) -> int:
        """Write `data` to the stdin (or terminal) the shim holds for `name`, then an end of file
        if `eof` (Ctrl-D on a terminal); returns how many bytes the tree has not read yet.

        Never waits for the tree to read: the shim buffers up to `MAX_PENDING_INPUT` bytes.

        Raises:
            InputClosed: it has no open stdin (none asked for, closed, ended, or the shim that
                held it died).
            InputFull: `data` does not fit in that buffer now; none of it was taken.
        """
        message = {"op": "input", "name": name, "data": base64.b64encode(data).decode(), "eof": eof}
        reply = await self._request(message, retry=False)
        return int(reply["unread"])

    async def resize(self, name: str, rows: int, cols: int) -> None:
        """Set the size of the terminal of `name` (its foreground group gets SIGWINCH).

        Raises:
            InputClosed: it has no terminal (any more).
        """
        await self._request({"op": "resize", "name": name, "rows": rows, "cols": cols}, retry=False)

    async def release(self, name: str) -> None:
        """Forget an execution whose tree is empty, and remove its cgroups.

        Raises:
            NotEmpty: its leader or some process of its tree still runs.
        """
        child = self._children.get(name)
        if child is None or not child.orphaned:
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
        """Ask the shim to exit now: once every tree it holds is empty (SandboxError otherwise)."""
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
            if child is not None:  # the same name held anew: who waited on it waits on this one
                callbacks, child.on_exit = child.on_exit, []
                for callback in callbacks:
                    self.when_exited(known.info.name, callback)
        else:
            child.update(known.status, known.empty)

    async def _request(
        self, message: dict[str, Any], *, retry: bool = True, internal: bool = False
    ) -> dict[str, Any]:
        """Send `message`, return the shim's answer; asks a replacement shim again if `retry`.

        `internal`: part of a replacement (the trees are not taken back yet): never waits.
        """
        while True:
            if not internal:
                await self._wait_ready()
            if self._lost is not None:
                raise SupervisorLost(self._lost)
            generation = self._generation
            request_id = self._next_id
            self._next_id += 1
            reply = _Reply()
            self._pending[request_id] = reply
            try:
                data = encode({"id": request_id, **message})
                # A cancelled send_all could leave half a line on the socket: never cancel it.
                with trio.CancelScope(shield=True):
                    async with self._send_lock:
                        if generation != self._generation:
                            reply.done.set()  # the shim it was meant for is gone
                        else:
                            # A broken connection is the reader's to notice: it replaces the
                            # shim or gives up, and either way answers every pending request.
                            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                                await self._stream.send_all(data)
                await reply.done.wait()
            finally:
                del self._pending[request_id]
            if reply.message is not None:
                break
            if self._lost is not None or internal or not retry or self._reconnect is None:
                raise SupervisorLost(self._lost or "the shim died before answering")
        if not reply.message.get("ok"):
            raise _error(reply.message.get("error"))
        return reply.message

    async def _wait_ready(self) -> None:
        # Event.wait() yields even when set, and a replacement may begin meanwhile (with a new,
        # unset event): only a check without a yield after it is current.
        while not self._ready.is_set():
            await self._ready.wait()

    async def _run(self, nursery: trio.Nursery) -> None:
        """Read the shim's messages; replace it each time it dies (if replacing is asked for)."""
        try:
            while True:
                reason = await self._receive()
                if self._closing or self._reconnect is None:
                    self._lose(reason)
                    return
                generation = await self._replace(reason)
                nursery.start_soon(self._take_all_back, generation)
        finally:  # cancelled too: a call on the way out must fail, not wait for an answer
            self._lose("the supervisor stopped reading the shim's answers")

    async def _receive(self) -> str:
        """Dispatch the shim's messages until the connection ends; returns why it ended."""
        try:
            for line in self._lines.drain():  # what followed the answer to hello
                self._dispatch(decode(line))
            while True:
                data = await self._stream.receive_some(1 << 16)
                if not data:
                    return "the shim closed the connection"
                for line in self._lines.feed(data):
                    self._dispatch(decode(line))
        except trio.ClosedResourceError:
            return "the supervisor was closed"
        except (trio.BrokenResourceError, OSError) as e:
            return f"connection to the shim lost: {e}"
        except (ProtocolError, KeyError, TypeError, ValueError) as e:
            # A malformed message must fail the waits, not the daemon's supervisor block.
            return f"the shim sent something unexpected: {e!r}"

    async def _replace(self, reason: str) -> int:
        """Connect to a new shim (retrying until one starts); returns the new generation."""
        self._ready = trio.Event()
        self.degraded = f"the sandbox shim (pid {self.shim_pid}) is being replaced: {reason}"
        self._generation += 1
        for pending in self._pending.values():
            pending.done.set()
        with trio.CancelScope(shield=True):
            await self._stream.aclose()
        delay = _REPLACE_DELAYS_S[0]
        assert self._reconnect is not None
        while True:
            try:
                stream, lines, hello = await self._reconnect()
                break
            except SandboxError as e:
                self.degraded = f"the sandbox shim died ({reason}) and cannot be replaced yet: {e.message}"
            await trio.sleep(delay)
            delay = min(delay * 2, _REPLACE_DELAYS_S[1])
        self._stream, self._lines = stream, lines
        self._greet(hello)
        return self._generation

    async def _take_all_back(self, generation: int) -> None:
        """Have the new shim hold every tree the dead one held (as recovery does after a crash)."""
        try:
            for child in list(self._children.values()):
                await self._take_back(child.info, internal=True)
        except SupervisorLost:
            return  # this shim died too: its replacement takes them back
        if generation == self._generation:
            self.replacements += 1
            self.degraded = None
            self._ready.set()

    async def _take_back(self, info: ChildInfo, *, internal: bool = False) -> None:
        """Adopt `info`'s tree by identity, or record it as ended (its status file, else unknown)."""
        child = self._children.get(info.name)
        if child is not None and child.empty and info.name not in self._held:
            child.orphaned = True
        if child is not None and (child.empty or child.orphaned):
            return
        reply = await self._request({"op": "adopt", "info": info.to_dict()}, internal=internal)
        if not reply["adopted"]:
            status = read_status_file(info.dir, info) or UNKNOWN_EXIT
            if child is None:
                self._children[info.name] = child = _Child(KnownChild(info, status, True))
            child.update(status, True)
            child.orphaned = True

    def _dispatch(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if event is None:
            # A reply that carries an execution registers it before the caller resumes, so
            # that events about it which follow in the stream are never missed.
            if message.get("ok") and message.get("child"):
                if message.get("claimed"):
                    self._children.pop(str(message["claimed"]), None)
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
        self._ready.set()  # who waits for a replacement shim learns of the loss
        for reply in self._pending.values():
            reply.done.set()
        for child in self._children.values():
            child.set_exited()
            child.emptied.set()

    async def _close(self) -> None:
        self._closing = True
        self._lose("the supervisor was closed")
        with trio.CancelScope(shield=True):
            await self._stream.aclose()


@asynccontextmanager
async def open_supervisor(
    run_dir: str | os.PathLike[str],
    *,
    python: str = sys.executable,
    idle_linger: float = 30.0,
    replace_dead_shim: bool = False,
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
        replace_dead_shim: when the shim dies, start a new one at once and have it take back
            every tree the dead one held (by identity; a tree that ended meanwhile gets the
            status its shim recorded, else UNKNOWN_EXIT). Calls wait meanwhile (`problem`
            says why) instead of raising SupervisorLost.

    Raises:
        ShimRefused: another daemon is connected to that shim.
        SandboxError: no shim could be started (the message quotes its log).
    """
    directory = prepare_run_dir(run_dir)
    stream, lines, hello = await connect(directory, python, idle_linger)
    reconnect = partial(connect, directory, python, idle_linger) if replace_dead_shim else None
    supervisor = Supervisor(stream, lines, hello, reconnect)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(supervisor._run, nursery)
        try:
            yield supervisor
        finally:
            await supervisor._close()
            nursery.cancel_scope.cancel()
