"""Serving HTTP connections: hypercorn's HTTP/1.1 protocol on trio, with the limits a daemon needs.

hypercorn's own `worker_serve` is what this replaces, for two measured faults of its connection
task (hypercorn 0.18):

- A connection whose client has gone (EOF, or a read that failed) stays open until its keep-alive
  timer fires: the task waits for that timer before it closes the socket. ~1,100 connect-and-close
  calls under a 1,024 descriptor limit made the API unreachable for the whole keep-alive period.
  `_Connection` stops the timer as soon as no more can be read.
- It takes every connection it can accept. `Gate` holds at most `limit` at once; one more is
  answered `503` (the JSON error of API.md) and closed, instead of running the daemon out of
  file descriptors.

And it writes the pieces of a response straight to the socket when it can (`_send_now`,
`write_chunk`), without the turns of the event loop and the layers of Python that each piece
otherwise goes through.

A request h11 cannot parse (a `Content-Length` or chunk size that is no number, a head too long)
gets the JSON error of API.md too (`_send_framing_error`), not hypercorn's empty `400` or `431`.

The listening sockets are made (and their backlog set) by the caller, before the daemon starts.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import h11
import trio
from hypercorn.config import Config, Sockets
from hypercorn.events import Event, RawData
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.protocol.http_stream import ASGIHTTPState, HTTPStream
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import repr_socket_addr

from api.errors import STATUS, error_body

log = logging.getLogger("workbench.serve")

#: How long a refused connection gets to send its request and read the 503 before it is closed.
_REFUSE_S = 1.0
#: How much of h11's reason for refusing a request its error message quotes (h11 quotes the
#: line it could not parse, which can be as long as a head may be).
_REASON_CHARS = 200


class _KeepAlive:
    """hypercorn's keep-alive timer (its `TrioSingleTask` and `_idle_timeout`) as one task per
    connection whose deadline moves: hypercorn starts a task at the end of every response and
    cancels it at the start of the next request, a task's start and end on the event loop each
    time. As hypercorn's, an idle connection closes once it was idle for `seconds`, or at once
    when the server stops (`terminated`); a busy one when its response is done."""

    def __init__(self, seconds: float, terminated: Any) -> None:
        self._seconds = seconds
        self._terminated = terminated
        self._stopping = False
        self._ended = False
        self._scope: trio.CancelScope | None = None
        self._deadline = math.inf

    async def restart(self, task_group: Any, close: Any) -> None:
        """Idle from now: `close()` runs `seconds` from now unless a request comes first."""
        self._set(trio.current_time() + (0 if self._stopping else self._seconds))
        if self._scope is None and not self._ended:
            self._scope = trio.CancelScope(deadline=self._deadline)
            task_group.spawn(self._run, close)

    async def stop(self) -> None:
        """Busy (a request is being answered): no timer."""
        self._set(math.inf)

    def end(self) -> None:
        """Nothing more can be read: the timer's task ends (without closing anything)."""
        self._ended = True
        if self._scope is not None:
            self._scope.cancel()

    def _set(self, deadline: float) -> None:
        self._deadline = deadline
        if self._scope is not None:
            self._scope.deadline = deadline

    async def _run(self, close: Any) -> None:
        assert self._scope is not None
        while True:
            with self._scope:
                if self._stopping:
                    await trio.sleep_forever()
                else:
                    await self._terminated.wait()
                    self._stopping = True
            if self._ended:
                return
            if self._deadline <= trio.current_time() or (self._stopping and self._deadline < math.inf):
                break  # idle all along, or idle as the server stops
            self._scope = trio.CancelScope(deadline=self._deadline)
        self._scope = None
        with trio.CancelScope(shield=True):
            await close()


class _Connection(TCPServer):
    """hypercorn's connection task, which closes as soon as nothing more can be read, with a
    cheaper keep-alive timer (`_KeepAlive`), writes straight to the socket when it takes them
    (`_send_now`), and no write of the nothing that ends a body of known length."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._keep_alive = _KeepAlive(self.config.keep_alive_timeout, self.context.terminated)
        self.idle_task = self._keep_alive  # type: ignore[assignment]
        # A write straight to the socket (`_send_now`): a plain socket, in a process where a
        # write to a closed connection is an error and not a fatal SIGPIPE (Python's default).
        # (hypercorn types the stream as TLS; a plain connection's is a `SocketStream`.)
        stream: object = self.stream
        self._socket: trio.socket.SocketType | None = None
        if isinstance(stream, trio.SocketStream) and signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN:
            self._socket = stream.socket

    async def _idle_timeout(self) -> None:
        # What `_KeepAlive` calls once the connection is to close (it is the timer).
        await self._initiate_server_close()

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, RawData):
            if not event.data:
                return  # h11's end of a body of known length: nothing to write
            sent = self._send_now(event.data)
            if sent == len(event.data):
                return
            if sent:
                event = RawData(data=event.data[sent:])
        await super().protocol_send(event)

    def _send_now(self, data: bytes) -> int:
        """Write what the socket takes at once, without a turn of the event loop; how much.

        hypercorn's own write takes a lock, enters a cancel scope and gives the loop a turn
        twice (the lock's and the socket's checkpoints), for each piece of every response; 200
        SSE followers pay it per event each (the daemon's CPU time while 200 followers read an
        execution printing 20,000 lines halved with this path: about 250 to 125 ms). When no
        other write of this connection is under way (the lock is free) and the socket takes it
        all, order and atomicity hold without them. What is left (a full socket buffer, an
        error, TLS) goes hypercorn's way, which waits, and closes the connection on an error as
        before."""
        sock = self._socket
        if sock is None or self.send_lock.locked():
            return 0
        fd = sock.fileno()  # -1 once closed: never the number of another file
        if fd < 0 or sock.did_shutdown_SHUT_WR:
            return 0
        try:
            return os.write(fd, data)
        except OSError:  # a full buffer, or a broken connection: hypercorn's way tells which
            return 0

    async def write_chunk(self, stream: HTTPStream, protocol: H11Protocol, body: bytes) -> bool:
        """Send `body` (not empty) as the next piece of `stream`'s response when h11 frames it
        as a chunk (HTTP/1.1, no length known, not HEAD): the bytes h11 would make of it, written
        as `protocol_send` writes them; False, nothing sent, otherwise (the piece then goes
        hypercorn's way, which frames it or drops it as its state says).

        A piece of a body otherwise goes from the app through hypercorn's stream and protocol and
        h11's state machine and writer to `protocol_send`, about 8 µs of Python that change no
        state for a chunk: 200 SSE followers pay it per event each. h11 keeps its framing in
        `_writer`; should a later h11 keep it elsewhere, every piece goes hypercorn's way."""
        connection = protocol.connection
        if (
            stream.state is not ASGIHTTPState.RESPONSE
            or stream.closed
            or connection.our_state is not h11.SEND_BODY
            or type(getattr(connection, "_writer", None)) is not _CHUNKED
        ):
            return False
        frame = b"%x\r\n%s\r\n" % (len(body), body)
        await self.protocol_send(RawData(data=frame))
        return True

    async def _send_framing_error(self, protocol: H11Protocol, status_code: int) -> None:
        """`protocol`'s `_send_error_response`, which hypercorn calls where h11 raised
        `RemoteProtocolError` on a request it cannot parse, to answer `status_code` (h11's hint:
        400, 431 for a head too long) with an empty body and close: the same answer, but with the
        JSON error of API.md, which says what h11 found wrong. hypercorn calls it inside its
        `except` of that error, so the error is the one being handled (`sys.exception()`)."""
        error = sys.exception()
        if status_code == 431:  # h11's reason, "Receive buffer too long", says little
            limit = self.config.h11_max_incomplete_size
            reason = f"its head (or a chunk's size line) runs past {limit} bytes"
        elif isinstance(error, h11.RemoteProtocolError):
            reason = str(error)[:_REASON_CHARS]
        else:
            reason = "it cannot be parsed"
        message = f"the request is not valid HTTP/1.1: {reason}"
        # The code of the status where there is one (413: payload_too_large), else bad_request.
        code = next((code for code, status in STATUS.items() if status == status_code), "bad_request")
        body = json.dumps(error_body(code, message)).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(body)),
            (b"connection", b"close"),
            *self.config.response_headers("h11"),
        ]
        await protocol._send_h11_event(h11.Response(status_code=status_code, headers=headers))
        await protocol._send_h11_event(h11.Data(data=body))
        await protocol._send_h11_event(h11.EndOfMessage())

    async def _read_data(self) -> None:
        # hypercorn made the protocol (`run`) just before it reads: a request it cannot parse is
        # answered by this connection's `_send_framing_error` (this instance's, nothing global).
        protocol = self.protocol.protocol
        if isinstance(protocol, H11Protocol):
            protocol._send_error_response = partial(self._send_framing_error, protocol)  # type: ignore[method-assign]
        await super()._read_data()
        # EOF or a broken read: no request can come any more, so the keep-alive timer (all that
        # would keep this task, and its socket, alive) has nothing left to wait for.
        self._keep_alive.end()


#: h11's writer of a chunked body (None in an h11 without it: no piece is written directly).
_CHUNKED: Any = getattr(getattr(h11, "_writers", None), "ChunkedWriter", None)

#: Sends a piece of a response's body straight to its connection; False: it was not sent.
ChunkWriter = Callable[[bytes], Awaitable[bool]]


def chunk_writer(send: Any) -> ChunkWriter | None:
    """For the ASGI `send` that hypercorn gives an app for a request on a `_Connection` over
    HTTP/1.1: its connection's `write_chunk` for that request; None for any other."""
    stream = getattr(send, "__self__", None)
    if not isinstance(stream, HTTPStream) or _CHUNKED is None:
        return None
    protocol = getattr(stream.send, "__self__", None)
    if not isinstance(protocol, H11Protocol):
        return None
    connection = getattr(protocol.send, "__self__", None)
    if not isinstance(connection, _Connection):
        return None
    return partial(connection.write_chunk, stream, protocol)


class Gate:
    """Counts open connections; past `limit` a new one is answered `503` and closed at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self.refused = 0
        message = (
            f"the daemon holds {limit} connections, its limit (WORKBENCH_MAX_CONNECTIONS); "
            "close idle ones or try again later"
        )
        body = json.dumps(error_body("unavailable", message)).encode()
        self._refusal = (
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
            b"retry-after: 1\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )

    async def handle(self, serve: Any, stream: trio.abc.Stream) -> None:
        if self.open >= self.limit:
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                log.warning("connections: %d open, the limit; refused %d so far", self.open, self.refused)
            await self._refuse(stream)
            return
        self.open += 1
        try:
            await serve(stream)
        finally:
            self.open -= 1

    async def _refuse(self, stream: trio.abc.Stream) -> None:
        # Read the request first (or what of it comes soon): closing with unread bytes would send
        # a reset, which can destroy the answer before the client reads it.
        with trio.move_on_after(_REFUSE_S):
            try:
                data = b""
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        break
                    data += chunk
                await stream.send_all(self._refusal)
                if isinstance(stream, trio.abc.HalfCloseableStream):
                    await stream.send_eof()
                while await stream.receive_some(65536):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        await trio.aclose_forcefully(stream)


async def serve_http(
    app: Any,
    config: Config,
    sockets: Sockets,
    gate: Gate,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` (an ASGI app wrapped by hypercorn's `wrap_app`) on the TLS, plain TCP and Unix
    sockets of `sockets` until cancelled; reports the bound addresses through `task_status`.

    It only ends by being cancelled (as `worker_serve` does when cancelled from outside, the ASGI
    lifespan's shutdown is not run: the app registers nothing for it).
    """
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(app, config, lifespan_state)
    context = WorkerContext(None)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as server_nursery:
            listeners: list[trio.SSLListener[trio.SocketStream] | trio.SocketListener] = []
            binds = []
            ssl_context = config.create_ssl_context()
            for sock in sockets.secure_sockets:
                assert ssl_context is not None
                plain = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
                listeners.append(trio.SSLListener(plain, ssl_context, https_compatible=True))
                binds.append(f"https://{repr_socket_addr(sock.family, sock.getsockname())}")
            for sock in sockets.insecure_sockets:
                listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
                binds.append(f"http://{repr_socket_addr(sock.family, sock.getsockname())}")
            connection = partial(_Connection, app, config, context, ConnectionState(lifespan_state.copy()))
            task_status.started(binds)
            try:
                await trio.serve_listeners(
                    partial(gate.handle, connection), listeners, handler_nursery=server_nursery
                )
            finally:
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
