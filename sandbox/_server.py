"""The shim's event loop: one client connection, the executions, and the kernel's notifications.

Single-threaded and without trio, so it may spawn freely and reap with waitpid(-1). It sleeps in
one `selectors` call over the listening socket, the client, a wake-up fd for SIGCHLD, an
inotify fd (cgroup.events files) and pidfds (processes that are not its children); it never
polls on a timer. Its only timeout is the idle deadline after which it exits.
"""

from __future__ import annotations

import base64
import contextlib
import os
import selectors
import signal
import socket
import struct
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar

from . import _procfs
from ._detect import Capabilities
from ._errors import SandboxError, SpawnError, error_type_name
from ._executions import Executions
from ._launch import prepare_shim
from ._linux import IN_IGNORED, IN_MODIFY, Inotify
from ._model import ChildInfo, SpawnSpec
from ._protocol import PID_NAME, PROTOCOL_VERSION, SOCKET_NAME, LineBuffer, ProtocolError, decode, encode
from ._tracking import Tracked

#: Before its first client, the shim waits at least this long (the launcher's client connects
#: within milliseconds; this only bounds a shim whose client died while starting it).
STARTUP_GRACE_S = 10.0


class Shim:
    """The shim: serves one client at a time and holds every execution it started or adopted."""

    def __init__(self, run_dir: str, listener: socket.socket, caps: Capabilities, idle_linger: float) -> None:
        self.pid = os.getpid()
        self.run_dir = run_dir
        self.listener = listener
        self.caps = caps
        self.idle_linger = idle_linger
        self.sweeps: dict[str, Tracked] = {}
        self.file_watches: dict[int, Callable[[], None]] = {}
        self.conn: socket.socket | None = None
        self.conn_events = 0
        self.peer = "?"
        self.greeted = False
        self.lines = LineBuffer()
        self.out = bytearray()
        self.stopping = False
        #: Spawns that wait for a keeper from the factory, in order: (id, request, deadline).
        self.parked: deque[tuple[Any, dict[str, Any], float]] = deque()
        self.idle_deadline: float | None = time.monotonic() + max(idle_linger, STARTUP_GRACE_S)
        self.sel = selectors.DefaultSelector()
        self.inotify = Inotify()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.executions = Executions(self, run_dir, caps)

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        """Serve until shut down, or idle (no client, nothing alive) for the linger time."""
        signal.signal(signal.SIGCHLD, lambda _sig, _frame: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        prepare_shim()
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ, self._on_accept)
        self.sel.register(self.wake_r, selectors.EVENT_READ, self._on_sigchld)
        self.sel.register(self.inotify.fd, selectors.EVENT_READ, self._on_inotify)
        self.log(f"serving {self.run_dir}: {self.caps.describe()}")
        self._reap()
        while not self.stopping:
            for key, mask in self.sel.select(self._timeout()):
                # An earlier callback of this batch may have closed (and reused) this fd.
                current = self.sel.get_map().get(key.fd)
                if current is not None and current.data is key.data:
                    key.data(mask)
            self._run_sweeps()
            self._run_parked()
            self.executions.release_discarded()
            self._flush()
            if self._idle() and self.idle_deadline is not None and time.monotonic() >= self.idle_deadline:
                self.log("idle: no client and nothing alive")
                break
        self._cleanup()

    def _timeout(self) -> float | None:
        idle = self._idle_timeout()
        if not self.parked:
            return idle
        parked = max(0.0, self.parked[0][2] - time.monotonic())
        return parked if idle is None else min(idle, parked)

    def _idle(self) -> bool:
        return self.conn is None and not self.executions.alive()

    def _idle_timeout(self) -> float | None:
        if not self._idle():
            self.idle_deadline = None
            return None
        if self.idle_deadline is None:
            self.idle_deadline = time.monotonic() + self.idle_linger
        return max(0.0, self.idle_deadline - time.monotonic())

    def log(self, message: str) -> None:
        """Write a line to the shim's log (its stderr)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        sys.stderr.write(f"{stamp} shim[{self.pid}] {message}\n")
        sys.stderr.flush()

    # -- what trackers use (see _tracking.Host) ---------------------------------------------

    def emit(self, message: dict[str, Any]) -> None:
        """Queue an event for the client (dropped when none is connected: hello has it all)."""
        if self.conn is not None and self.greeted:
            self.out += encode(message)

    def watch_fd(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` becomes readable."""
        self.sel.register(fd, selectors.EVENT_READ, lambda _mask: callback())

    def watch_fd_writable(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback()` when `fd` is writable."""
        self.sel.register(fd, selectors.EVENT_WRITE, lambda _mask: callback())

    def unwatch_fd(self, fd: int) -> None:
        """Stop watching `fd`."""
        self.sel.unregister(fd)

    def watch_file(self, path: str, callback: Callable[[], None]) -> int:
        """Call `callback()` whenever `path` is modified."""
        wd = self.inotify.add_watch(path, IN_MODIFY)
        self.file_watches[wd] = callback
        return wd

    def unwatch_file(self, wd: int) -> None:
        """Stop watching a file."""
        if self.file_watches.pop(wd, None) is not None:
            self.inotify.rm_watch(wd)

    def is_leader(self, pid: int) -> bool:
        """Whether `pid` is an execution's leader (or keeper) not yet reaped."""
        ex = self.executions
        return pid in ex.leaders or pid in ex.keepers or (ex.factory is not None and pid == ex.factory.pid)

    def need_sweep(self, tracked: Tracked) -> None:
        """Sweep /proc for `tracked` at the end of this iteration."""
        self.sweeps[tracked.name] = tracked

    # -- kernel notifications ---------------------------------------------------------------

    def _on_sigchld(self, _mask: int) -> None:
        try:
            while os.read(self.wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        self._reap()

    def _reap(self) -> None:
        # The shim has no other users of wait(): reaping everything here is safe, and it
        # also reaps the escapees reparented to it as subreaper.
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.executions.reaped(pid, status, usage)

    def _on_inotify(self, _mask: int) -> None:
        fired: dict[int, None] = {}
        for wd, event in self.inotify.read_events():
            if event & IN_IGNORED:
                self.file_watches.pop(wd, None)
            else:
                fired[wd] = None
        for wd in fired:
            callback = self.file_watches.get(wd)
            if callback is not None:
                callback()

    def _run_sweeps(self) -> None:
        if not self.sweeps:
            return
        pending = list(self.sweeps.values())
        self.sweeps.clear()
        snap = _procfs.snapshot()
        shim_tree = _procfs.descendants(snap, [self.pid])
        for tracked in pending:
            if self.executions.children.get(tracked.name) is tracked:
                tracked.sweep(snap, shim_tree)

    # -- the client connection --------------------------------------------------------------

    def _on_accept(self, _mask: int) -> None:
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, ConnectionAbortedError):
            return
        peer = _peer_pid(sock)
        if self.conn is not None:
            message = f"another daemon (pid {self.peer}) is connected to this shim; it serves one at a time"
            self.log(f"refused pid {peer}: busy")
            _refuse(sock, message)
            return
        sock.setblocking(False)
        self.conn, self.peer, self.greeted = sock, peer, False
        self.lines = LineBuffer()
        self.out.clear()
        self.conn_events = selectors.EVENT_READ
        self.sel.register(sock, self.conn_events, self._on_conn)
        self.log(f"client pid {peer} connected")

    def _drop(self, why: str) -> None:
        if self.conn is None:
            return
        self.sel.unregister(self.conn)
        self.conn.close()
        self.conn = None
        self.out.clear()
        if self.parked:
            # Unanswered, so never started: as if the client had died before sending them.
            self.log(f"client pid {self.peer} gone with {len(self.parked)} spawns waiting: dropped")
            self.parked.clear()
            self.executions.waiting = 0
        self.log(f"client pid {self.peer} gone: {why}")
        # Nobody will claim them now: they must not outlive their daemon (nor keep the shim).
        self.executions.drop_unclaimed()

    def _on_conn(self, mask: int) -> None:
        if mask & selectors.EVENT_READ and self.conn is not None:
            try:
                data = self.conn.recv(1 << 16)
            except BlockingIOError:
                data = None
            except OSError as e:
                self._drop(str(e))
                return
            if data == b"":
                self._drop("disconnected")
                return
            try:
                lines = self.lines.feed(data) if data else []
            except ProtocolError as e:
                self._drop(str(e))
                return
            conn = self.conn
            for line in lines:
                self._handle(line)
                if self.conn is not conn:
                    return  # dropped (refused hello)
        if mask & selectors.EVENT_WRITE:
            self._flush()

    def _flush(self) -> None:
        if self.conn is None:
            return
        while self.out:
            try:
                sent = self.conn.send(self.out)
            except BlockingIOError:
                break
            except OSError as e:
                self._drop(str(e))
                return
            del self.out[:sent]
        wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.out else 0)
        if wanted != self.conn_events:
            self.conn_events = wanted
            self.sel.modify(self.conn, wanted, self._on_conn)

    def _handle(self, line: bytes) -> None:
        request_id: Any = None
        try:
            message = decode(line)
            request_id = message.get("id")
            op = message.get("op")
            if not self.greeted:
                self._hello(message)
                return
            if op == "spawn" and self._park(request_id, message):
                return
        except (ProtocolError, KeyError, TypeError, ValueError) as e:
            error = {"type": "error", "message": f"bad request: {e!r}"}
            self.out += encode({"id": request_id, "ok": False, "error": error})
            return
        self._answer(request_id, message)

    def _answer(self, request_id: Any, message: dict[str, Any]) -> None:
        try:
            handler = self._handlers.get(str(message.get("op")))
            if handler is None:
                raise SandboxError(f"unknown operation {message.get('op')!r}")
            reply = handler(self, message)
            self.out += encode({"id": request_id, "ok": True, **reply})
        except SandboxError as e:
            error = {"type": error_type_name(e), "message": e.message}
            self.out += encode({"id": request_id, "ok": False, "error": error})
        except (ProtocolError, KeyError, TypeError, ValueError) as e:
            error = {"type": "error", "message": f"bad request: {e!r}"}
            self.out += encode({"id": request_id, "ok": False, "error": error})
        except Exception as e:  # a bug must not take every execution's supervision down
            self.log(f"internal error: {traceback.format_exc()}")
            error = {"type": "error", "message": f"internal error in the shim: {e!r}"}
            self.out += encode({"id": request_id, "ok": False, "error": error})

    def _park(self, request_id: Any, message: dict[str, Any]) -> bool:
        """Hold a spawn that needs a keeper while the factory makes one, and the spawns after it
        (in order): starting a keeper here would hold every other request up for two execs."""
        if not self.parked:
            try:
                if not self.executions.short_of_keepers(SpawnSpec.from_dict(message["spec"])):
                    return False
            except (KeyError, TypeError, ValueError, SandboxError):
                return False  # answered as any bad spawn
        self.parked.append((request_id, message, time.monotonic() + PARK_S))
        self.executions.want_keepers(len(self.parked))
        return True

    def _run_parked(self) -> None:
        """Answer the parked spawns that have a keeper now; past the deadline, one per turn of
        the loop whose keeper the shim starts itself (the factory is slow, or gone)."""
        while self.parked:
            request_id, message, deadline = self.parked[0]
            late = time.monotonic() >= deadline
            if not (late or self.executions.keeper_at_hand()):
                return
            self.parked.popleft()
            self.executions.waiting = len(self.parked)
            self._answer(request_id, message)
            if late:
                return

    def _hello(self, message: dict[str, Any]) -> None:
        if message.get("op") != "hello" or message.get("protocol") != PROTOCOL_VERSION:
            self.log(f"refused pid {self.peer}: {message.get('op')} protocol {message.get('protocol')}")
            text = f"this shim speaks protocol {PROTOCOL_VERSION}; start with a hello of that version"
            self.out += encode({"event": "refused", "error": {"type": "refused", "message": text}})
            self._flush()
            self._drop("refused")
            return
        self.greeted = True
        reply = {
            "protocol": PROTOCOL_VERSION,
            "shimPid": self.pid,
            "capabilities": self.caps.to_dict(),
            # Not those it forgets by itself once dead (no client holds them any more).
            "children": [
                t.known().to_dict()
                for name, t in self.executions.children.items()
                if name not in self.executions.discard
            ],
        }
        self.out += encode({"id": message.get("id"), "ok": True, **reply})

    # -- requests ---------------------------------------------------------------------------

    def _spawn(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            spec = SpawnSpec.from_dict(message["spec"])
        except (KeyError, TypeError, ValueError) as e:
            raise SpawnError(f"invalid spawn spec: {e}") from None
        return {"child": self.executions.spawn(spec).to_dict()}

    def _claim(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            spec = SpawnSpec.from_dict(message["spec"])
            data = base64.b64decode(str(message["input"]), validate=True)
            binds = [(str(path), bool(readonly)) for path, readonly in message.get("binds") or ()]
            same = [str(path) for path in message.get("same") or ()]
            if not all(os.path.isabs(path) for path, _ in binds) or not all(map(os.path.isabs, same)):
                raise ValueError("binds and same must be absolute paths")
        except (KeyError, TypeError, ValueError) as e:
            raise SpawnError(f"invalid claim: {e}") from None
        name = str(message["name"])
        return {"child": self.executions.claim(name, spec, data, binds, same).to_dict(), "claimed": name}

    def _signal(self, message: dict[str, Any]) -> dict[str, Any]:
        foreground = bool(message.get("foreground", False))
        self.executions.signal(str(message["name"]), int(message["signal"]), foreground)
        return {}

    def _input(self, message: dict[str, Any]) -> dict[str, Any]:
        data = base64.b64decode(str(message.get("data", "")), validate=True)
        channel = self.executions.channel(str(message["name"]))
        return {"unread": channel.write(data, bool(message.get("eof", False)))}

    def _resize(self, message: dict[str, Any]) -> dict[str, Any]:
        self.executions.channel(str(message["name"])).resize(int(message["rows"]), int(message["cols"]))
        return {}

    def _release(self, message: dict[str, Any]) -> dict[str, Any]:
        self.executions.release(str(message["name"]))
        return {}

    def _adopt(self, message: dict[str, Any]) -> dict[str, Any]:
        known = self.executions.adopt(ChildInfo.from_dict(message["info"]))
        return {"adopted": known is not None, "child": known.to_dict() if known else None}

    def _shutdown(self, _message: dict[str, Any]) -> dict[str, Any]:
        alive = self.executions.alive()
        if alive:
            raise SandboxError(
                f"cannot shut down: {len(alive)} executions still run ({', '.join(alive[:5])})"
            )
        self.stopping = True
        return {}

    _handlers: ClassVar[dict[str, Callable[[Shim, dict[str, Any]], dict[str, Any]]]] = {
        "spawn": _spawn,
        "claim": _claim,
        "signal": _signal,
        "input": _input,
        "resize": _resize,
        "release": _release,
        "adopt": _adopt,
        "shutdown": _shutdown,
    }

    def _cleanup(self) -> None:
        for request_id, _message, _deadline in self.parked:
            error = {"type": "error", "message": "the shim is stopping"}
            self.out += encode({"id": request_id, "ok": False, "error": error})
        if self.conn is not None:
            # The answer to "shutdown" must reach the client before the connection closes.
            with contextlib.suppress(OSError):
                self.conn.settimeout(1.0)
                self.conn.sendall(self.out)
            self.conn.close()
        self.executions.close()
        # Still holding the lock, so no newer shim can have replaced these files yet.
        for name in (SOCKET_NAME, PID_NAME):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.run_dir, name))
        self.listener.close()
        self.log("exiting")


#: How long a spawn waits for the factory's keeper before the shim starts one itself.
PARK_S = 0.05


def _peer_pid(sock: socket.socket) -> str:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return str(struct.unpack("3i", creds)[0])
    except OSError:
        return "?"


def _refuse(sock: socket.socket, message: str) -> None:
    sock.setblocking(False)
    try:
        sock.send(encode({"event": "refused", "error": {"type": "refused", "message": message}}))
    except OSError:
        pass
    sock.close()
