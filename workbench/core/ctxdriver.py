"""The driver of a Python code context: the program a context's interpreter runs.

It is not imported by the daemon: the daemon copies this file into the context's directory and
the image's own interpreter runs it (so it imports only the standard library, and any Python
3.8 or later runs it). It listens on a Unix socket (its only argument) and speaks frames: a
4-byte big-endian length, then that many bytes of JSON. The daemon connects (again after a
restart: a new connection replaces the old one) and gets a `hello` frame first:
``{"op": "hello", "pid", "busy": ID|null, "last": DONE|null}`` (what is running, and the reply
of the last cell, which a daemon that died before reading it still gets).

Requests: ``{"op": "run", "id", "code"}`` carries two file descriptors (SCM_RIGHTS), the
execution's stdout and stderr spool files: the cell's fds 1 and 2 are those while it runs, so
that everything it and its children write goes to the execution's own output (and the
interpreter's own fds 0, 1 and 2 are put back afterwards, whatever the cell did to them). Reply:
``{"op": "done", "id", "result": TEXT|null, "error": null|{"type", "message", "traceback"},
"interrupted": bool, "usage": {"cpuUserMs", "cpuSystemMs", "peakMemoryBytes"}}`` (see `Usage`).
``{"op": "interrupt", "id"}`` raises KeyboardInterrupt in that cell if it is still the one
running (a SIGINT to the main thread, so that a blocking call is broken too). SIGINT is blocked
outside cells, so a late interrupt never hits the driver itself.
"""

from __future__ import annotations

import array
import ast
import json
import linecache
import os
import queue
import resource
import signal
import socket
import struct
import sys
import threading
import traceback
from typing import Any, ClassVar

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024
#: The longest `result` text: a longer repr is cut (with a note).
MAX_RESULT_CHARS = 256 * 1024
_FDS_SPACE = socket.CMSG_SPACE(8 * array.array("i").itemsize)


class Link:
    """One connection from the daemon: frames in (with their fds), frames out."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""
        self.fds: list[int] = []
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode("utf-8")
        with self.lock:
            self.conn.sendall(HEADER.pack(len(data)) + data)

    def receive(self) -> dict[str, Any] | None:
        """The next frame, or None at the end of the connection."""
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if size > MAX_FRAME:
                    return None
                if len(self.buffer) >= HEADER.size + size:
                    body = self.buffer[HEADER.size : HEADER.size + size]
                    self.buffer = self.buffer[HEADER.size + size :]
                    message: dict[str, Any] = json.loads(body.decode("utf-8"))
                    return message
            data, ancillary, _flags, _addr = self.conn.recvmsg(1 << 16, _FDS_SPACE)
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                    self.fds.extend(fds)
            if not data:
                return None
            self.buffer += data

    def take_fds(self, count: int) -> list[int]:
        taken, self.fds = self.fds[:count], self.fds[count:]
        return taken


class Driver:
    """The interpreter's state: its namespace, the cell running, the last reply."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
        self.jobs: queue.Queue[tuple[str, str, list[int]]] = queue.Queue()
        self.lock = threading.Lock()
        self.current: str | None = None
        self.last: dict[str, Any] | None = None
        self.link: Link | None = None
        self.cells = 0
        self.pid = os.getpid()
        # Copies of the interpreter's own fds 0, 1 and 2 (not inherited): whatever a cell does to
        # those, they are put back from these once it ended.
        self.own = [os.dup(fd) for fd in (0, 1, 2)]

    # -- the connection (a thread) -------------------------------------------------------------

    def serve(self, listener: socket.socket) -> None:
        while True:
            conn, _ = listener.accept()
            link = Link(conn)
            with self.lock:
                old, self.link = self.link, link
                hello = {"op": "hello", "pid": os.getpid(), "busy": self.current, "last": self.last}
            if old is not None:
                _close(old.conn)
            try:
                link.send(hello)
                self._read(link)
            except OSError:
                pass
            finally:
                _close(conn)
                for fd in link.fds:
                    os.close(fd)

    def _read(self, link: Link) -> None:
        while True:
            message = link.receive()
            if message is None:
                return
            op = message.get("op")
            if op == "run":
                fds = link.take_fds(2)
                if len(fds) == 2:
                    self.jobs.put((str(message["id"]), str(message["code"]), fds))
                else:
                    for fd in fds:
                        os.close(fd)
            elif op == "interrupt":
                with self.lock:
                    if self.current is not None and self.current == message.get("id"):
                        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def reply(self, message: dict[str, Any]) -> None:
        with self.lock:
            self.last, self.current, link = message, None, self.link
        if link is not None:
            try:
                link.send(message)
            except OSError:
                pass  # the daemon is gone: the next one reads it from `hello`

    # -- the cells (the main thread) -----------------------------------------------------------

    def run_forever(self) -> None:
        while True:
            execution_id, code, fds = self.jobs.get()
            with self.lock:
                self.current = execution_id
            try:
                reply = self.run_cell(execution_id, code, fds)
            except Exception as exc:  # the driver's own failure: this cell's answer, not its end
                reply = _done(execution_id, error=_error_of(exc))
            self.reply(reply)

    def run_cell(self, execution_id: str, code: str, fds: list[int]) -> dict[str, Any]:
        self.cells += 1
        _flush()
        for fd, spool in enumerate(fds, start=1):
            os.dup2(spool, fd)
            os.close(spool)
        os.environ["WORKBENCH_EXECUTION_ID"] = execution_id
        usage = Usage()
        reply: dict[str, Any] = _done(execution_id, error=_error_of(KeyboardInterrupt()), interrupted=True)
        try:
            try:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
                reply = self.execute(execution_id, code)
            finally:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        except KeyboardInterrupt:
            pass
        _settle()
        reply["usage"] = usage.taken()
        _flush()
        self.restore()
        return reply

    def restore(self) -> None:
        """Put the interpreter's fds 0, 1 and 2 back, whatever the cell made of them (closed,
        replaced); one whose copy the cell closed too becomes /dev/null."""
        for fd, own in enumerate(self.own):
            try:
                os.dup2(own, fd)
            except OSError:
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
                self.own[fd] = os.dup(fd)

    def execute(self, execution_id: str, code: str) -> dict[str, Any]:
        filename = f"<cell {self.cells}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            body, last = _compiled(code, filename)
        except KeyboardInterrupt as exc:
            return _done(execution_id, error=_error_of(exc), interrupted=True)
        except Exception as exc:  # a SyntaxError (or one like it): its frames are the compiler's
            return _done(execution_id, error=_error_of(exc.with_traceback(None)))
        try:
            exec(body, self.namespace)
            value = eval(last, self.namespace) if last is not None else None
        except KeyboardInterrupt as exc:
            self._end_if_forked(exc)
            return _done(execution_id, error=_error_of(exc), interrupted=True)
        except BaseException as exc:  # SystemExit too: the context lives on
            self._end_if_forked(exc)
            return _done(execution_id, error=_error_of(exc))
        self._end_if_forked(None)
        if value is None:
            return _done(execution_id)
        self.namespace["_"] = value
        try:
            text = str.__str__(repr(value))
        except BaseException as exc:
            return _done(execution_id, error=_error_of(exc))
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"... ({len(text) - MAX_RESULT_CHARS} more characters)"
        return _done(execution_id, result=text)

    def _end_if_forked(self, raised: BaseException | None) -> None:
        """In a copy of the interpreter made by `os.fork()` in the cell: end where the cell does,
        never answering for it, as a forked `multiprocessing` child ends (SystemExit's code; an
        uncaught exception's traceback on stderr and status 1)."""
        if os.getpid() == self.pid:
            return
        status = 0
        if isinstance(raised, SystemExit):
            if isinstance(raised.code, int):
                status = raised.code
            elif raised.code is not None:
                print(raised.code, file=sys.stderr)
                status = 1
        elif raised is not None:
            traceback.print_exception(raised)
            status = 1
        _flush()
        os._exit(status & 0xFF)


def _compiled(code: str, filename: str) -> tuple[Any, Any]:
    """The cell's code, and its final expression apart (to be its result) where it ends with one."""
    tree = ast.parse(code, filename=filename, mode="exec")
    last = None
    tail = tree.body[-1] if tree.body else None
    if isinstance(tail, ast.Expr):
        tree.body.pop()
        last = compile(ast.Expression(tail.value), filename, "eval")
    return compile(tree, filename, "exec"), last


class Usage:
    """What a cell used: the CPU time of the interpreter (all its threads) and of the children it
    waited for while the cell ran, and the most resident memory the interpreter held meanwhile
    (or a child it waited for, when that is more). Each figure null where it cannot be told."""

    def __init__(self) -> None:
        # The high-water mark of the resident memory starts again at what the interpreter holds
        # now (Linux 4.0 and later); where it cannot, only a lifetime mark that grew tells.
        self.reset = _write("clear_refs", "5")
        self.own = resource.getrusage(resource.RUSAGE_SELF)
        self.children = resource.getrusage(resource.RUSAGE_CHILDREN)

    def taken(self) -> dict[str, int | None]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        user = own.ru_utime - self.own.ru_utime + children.ru_utime - self.children.ru_utime
        system = own.ru_stime - self.own.ru_stime + children.ru_stime - self.children.ru_stime
        peak = _high_water() if self.reset else None
        if peak is None and own.ru_maxrss > self.own.ru_maxrss:
            peak = own.ru_maxrss * 1024
        if children.ru_maxrss > self.children.ru_maxrss:
            peak = max(peak or 0, children.ru_maxrss * 1024)
        return {
            "cpuUserMs": max(0, round(user * 1000)),
            "cpuSystemMs": max(0, round(system * 1000)),
            "peakMemoryBytes": peak,
        }


class _Proc:
    """The interpreter's own `/proc/self` files a cell's usage reads and writes, kept open (an
    open of one costs more than its read). A cell may close any fd, and its number be reused: each
    is checked to be the file it was before it is used, and opened again if not."""

    opened: ClassVar[dict[str, tuple[int, int, int]]] = {}  # name: (fd, st_dev, st_ino)

    @classmethod
    def fd(cls, name: str, flags: int) -> int:
        known = cls.opened.get(name)
        if known is not None:
            try:
                now = os.fstat(known[0])
                if (now.st_dev, now.st_ino) == known[1:]:
                    return known[0]
            except OSError:
                pass
        fd = os.open(f"/proc/self/{name}", flags | os.O_CLOEXEC)
        st = os.fstat(fd)
        cls.opened[name] = (fd, st.st_dev, st.st_ino)
        return fd


def _write(name: str, text: str) -> bool:
    try:
        os.pwrite(_Proc.fd(name, os.O_WRONLY), text.encode(), 0)
        return True
    except OSError:
        return False


def _high_water() -> int | None:
    """The interpreter's peak resident memory since its mark was reset (VmHWM), in bytes."""
    try:
        status = os.pread(_Proc.fd("status", os.O_RDONLY), 64 * 1024, 0)
        for line in status.splitlines():
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _done(
    execution_id: str,
    *,
    result: str | None = None,
    error: dict[str, str] | None = None,
    interrupted: bool = False,
) -> dict[str, Any]:
    return {"op": "done", "id": execution_id, "result": result, "error": error, "interrupted": interrupted}


def _error_of(exc: BaseException) -> dict[str, str]:
    """The error of a cell, however it behaves: each part that runs the exception's own code (its
    `str`, its type's attributes, the traceback's formatting) has a stand-in where it fails."""
    tb = exc.__traceback__
    # The driver's own frames are not the user's: the traceback starts at the cell.
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    # Read past the type's metaclass, which may define its attribute lookups.
    name = _text(lambda: _TYPE_NAME.__get__(type(exc)), "<unknown>")
    said = _text(lambda: str(exc), "<exception str() failed>")
    last = f"{name}: {said}" if said else name
    text = _text(
        lambda: "".join(traceback.format_exception(type(exc), exc, tb)),
        _text(lambda: "".join(["Traceback (most recent call last):\n", *traceback.format_tb(tb)]), "")
        + last
        + "\n",
    )
    return {"type": name, "message": last, "traceback": text}


_TYPE_NAME = type.__dict__["__name__"]


def _text(make: Any, fallback: str) -> str:
    """`make()` as a plain str, else `fallback` (whatever it raised: the cell's code may raise
    anything, an interrupt included, and the driver must still answer)."""
    try:
        return str.__str__(make())
    except BaseException:
        return fallback


def _noop() -> None:
    return None


def _settle() -> None:
    """Let a SIGINT that arrived just before it was blocked raise here, and drop a pending one."""
    for _ in range(3):
        try:
            _noop()
            if signal.SIGINT in signal.sigpending():
                signal.sigwait({signal.SIGINT})
            break
        except KeyboardInterrupt:
            continue


def _flush() -> None:
    """Write out what Python's streams hold (to wherever their fds point now)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass  # closed, or replaced by the cell with something that fails: the cell's own


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


def main(argv: list[str]) -> None:
    path = argv[1]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for stale in (path, path + ".new"):
        if os.path.lexists(stale):
            os.unlink(stale)
    # A socket's path is at most 107 bytes: bound through its directory's fd, any path fits.
    directory = os.open(os.path.dirname(path), os.O_PATH | os.O_CLOEXEC)
    short = f"/proc/self/fd/{directory}/{os.path.basename(path)}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(short + ".new")
    os.chmod(path + ".new", 0o600)
    listener.listen(4)
    # Renamed into place once listening: a connect to the path never finds it half made.
    os.rename(path + ".new", path)
    os.close(directory)
    driver = Driver()
    sys.argv = [""]
    threading.Thread(target=driver.serve, args=(listener,), daemon=True).start()
    driver.run_forever()


if __name__ == "__main__":
    main(sys.argv)
