"""Writes straight to a connection's socket (`api.listen._Connection._send_now`), and the pieces of
a chunked body written straight to the connection (`write_chunk`, as the daemon's `InFlight` does):
a body reaches the client whole and in order whether the socket takes it at once, in part (a
client that reads slowly), or not at all (a client that left), through the daemon's own
connection handling. A body that is not chunked (HTTP/1.0, HEAD) goes hypercorn's way."""

from __future__ import annotations

import hashlib
import socket
from typing import Any

import pytest
import trio
from hypercorn.config import Config, Sockets
from hypercorn.utils import wrap_app

from api import listen
from api.listen import Gate, chunk_writer, serve_http
from api.serve import InFlight

#: Pieces of several sizes, the largest far beyond what a socket buffer holds.
PIECES = [bytes([i % 251]) * size for i, size in enumerate([1, 700, 65536, 3 * 1024 * 1024, 5, 200_000, 1])]


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"x/y")]})
    try:
        for piece in PIECES:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except Exception:  # the client left: hypercorn's send says so
        pass


#: The apps served: hypercorn's way for every piece, and the daemon's (chunks straight to the connection).
APPS = pytest.mark.parametrize("served", [app, InFlight(app)], ids=["hypercorn", "direct-chunks"])


async def _serving(nursery: trio.Nursery, served: Any = app) -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    port: int = sock.getsockname()[1]
    config = Config()
    await nursery.start(
        serve_http,
        wrap_app(served, config.wsgi_max_body_size, "asgi"),
        config,
        Sockets([], [sock], []),
        Gate(64),
    )
    return port


async def _get(
    port: int, *, pause_every: int = 0, stop_after: int | None = None, request: bytes = b"GET / HTTP/1.1"
) -> bytes:
    """The raw response to one GET (head and chunked body), read slowly if asked."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(request + b"\r\nhost: x\r\nconnection: close\r\n\r\n")
        received = bytearray()
        reads = 0
        while chunk := await stream.receive_some(16384):
            received += chunk
            reads += 1
            if pause_every and reads % pause_every == 0:
                await trio.sleep(0.01)  # the server's socket buffer fills meanwhile
            if stop_after is not None and len(received) >= stop_after:
                break
        return bytes(received)


def _body(raw: bytes) -> bytes:
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:100]
    assert b"transfer-encoding: chunked" in head.lower()
    body = bytearray()
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n"
            return bytes(body)
        body += rest[:size]
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@APPS
async def test_a_body_read_at_once_arrives_whole_and_in_order(served: Any) -> None:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await _serving(nursery, served)
            assert _digest(_body(await _get(port))) == _digest(b"".join(PIECES))
            nursery.cancel_scope.cancel()


@APPS
async def test_a_body_read_slowly_arrives_whole_and_in_order(served: Any) -> None:
    # The socket takes a piece in part: the rest waits for room, and nothing overtakes it.
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await _serving(nursery, served)
            assert _digest(_body(await _get(port, pause_every=8))) == _digest(b"".join(PIECES))
            nursery.cancel_scope.cancel()


@APPS
async def test_a_client_that_leaves_mid_body_leaves_the_server_serving(served: Any) -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await _serving(nursery, served)
            for _ in range(3):
                partial = await _get(port, stop_after=100_000)
                assert partial.startswith(b"HTTP/1.1 200")
            # The connections the clients closed broke no write of the next one.
            assert _digest(_body(await _get(port))) == _digest(b"".join(PIECES))
            nursery.cancel_scope.cancel()


async def test_pieces_of_a_chunked_body_are_written_straight_to_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[int] = []
    write_chunk = listen._Connection.write_chunk

    async def counted(self: Any, stream: Any, protocol: Any, body: bytes) -> bool:
        sent = await write_chunk(self, stream, protocol, body)
        written.append(len(body) if sent else -len(body))
        return sent

    monkeypatch.setattr(listen._Connection, "write_chunk", counted)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await _serving(nursery, InFlight(app))
            assert _digest(_body(await _get(port))) == _digest(b"".join(PIECES))
            # Every piece (none is empty) went straight to the connection.
            assert written == [len(piece) for piece in PIECES]
            nursery.cancel_scope.cancel()


async def _direct(scope: Any, receive: Any, send: Any) -> None:
    """Writes each piece itself (`chunk_writer`), hypercorn's way when it is not a chunk."""
    if scope["type"] == "lifespan":
        await app(scope, receive, send)
        return
    write = chunk_writer(send)
    assert write is not None
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"x/y")]})
    for piece in PIECES:
        if not await write(piece):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.mark.parametrize("served", [app, InFlight(app), _direct], ids=["hypercorn", "in-flight", "direct"])
async def test_a_body_that_is_not_chunked_goes_hypercorns_way(served: Any) -> None:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await _serving(nursery, served)
            # HTTP/1.0: the body is the bytes until the close, no chunk framing.
            raw = await _get(port, request=b"GET / HTTP/1.0")
            head, _, body = raw.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"chunked" not in head.lower()
            assert _digest(body) == _digest(b"".join(PIECES))
            # HEAD: the head alone.
            raw = await _get(port, request=b"HEAD / HTTP/1.1")
            head, _, body = raw.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and body == b""
            nursery.cancel_scope.cancel()
