"""A lean HTTP/1.1 client on trio sockets, for the daemon's JSON routes and its SSE stream.

The benchmarks time the daemon, so the client must cost as little as possible: no connection
per request, no general-purpose HTTP stack. It speaks just what the daemon answers with: a body
with `Content-Length`, or a chunked body (streams). A pooled connection that the server closed
is replaced and the request sent again (starts carry an `Idempotency-Key`, so that is safe).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio


class HttpError(Exception):
    """A response that is not 2xx, or a protocol failure."""

    def __init__(self, status: int, body: bytes, what: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {body[:300].decode('utf-8', 'replace')}")
        self.status = status
        self.body = body


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class _Connection:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.reusable = True

    async def _fill(self) -> None:
        data = await self.stream.receive_some(256 * 1024)
        if not data:
            raise EOFError("connection closed by the server")
        self.buffer += data

    async def read_until(self, marker: bytes) -> bytes:
        start = 0
        while True:
            at = self.buffer.find(marker, start)
            if at >= 0:
                out = bytes(self.buffer[:at])
                del self.buffer[: at + len(marker)]
                return out
            start = max(0, len(self.buffer) - len(marker) + 1)
            await self._fill()

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            await self._fill()
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    async def read_head(self) -> tuple[int, dict[str, str]]:
        head = await self.read_until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("connection", "").lower() == "close":
            self.reusable = False
        return status, headers

    async def chunks(self, headers: dict[str, str]) -> AsyncIterator[bytes]:
        """The body, as it arrives (de-chunked)."""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await self.read_until(b"\r\n")).split(b";", 1)[0], 16)
                if size == 0:
                    await self.read_until(b"\r\n")
                    return
                while size > 0:
                    if not self.buffer:
                        await self._fill()
                    take = min(size, len(self.buffer))
                    piece = bytes(self.buffer[:take])
                    del self.buffer[:take]
                    size -= take
                    yield piece
                await self.read_exactly(2)
        elif "content-length" in headers:
            remaining = int(headers["content-length"])
            while remaining > 0:
                if not self.buffer:
                    await self._fill()
                take = min(remaining, len(self.buffer))
                piece = bytes(self.buffer[:take])
                del self.buffer[:take]
                remaining -= take
                yield piece
        else:
            self.reusable = False
            while True:
                if self.buffer:
                    piece = bytes(self.buffer)
                    self.buffer.clear()
                    yield piece
                try:
                    await self._fill()
                except EOFError:
                    return


class Client:
    """Requests to one daemon, over a small pool of kept-alive connections."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port = host, port
        self._auth = f"Bearer {token}"
        self._idle: list[_Connection] = []

    async def _connect(self) -> _Connection:
        return _Connection(await trio.open_tcp_stream(self.host, self.port))

    def _encode(
        self,
        method: str,
        path: str,
        body: bytes | None,
        extra: dict[str, str] | None,
        content_type: str = "application/json",
    ) -> bytes:
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            f"Authorization: {self._auth}",
        ]
        if body is not None:
            lines.append(f"Content-Type: {content_type}")
            lines.append(f"Content-Length: {len(body)}")
        for name, value in (extra or {}).items():
            lines.append(f"{name}: {value}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body is not None else head

    async def request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        headers: dict[str, str] | None = None,
        *,
        check: bool = True,
    ) -> Response:
        """One request; raises HttpError on a non-2xx status when `check`. `payload` is JSON, or
        bytes sent as they are (`application/octet-stream`)."""
        if isinstance(payload, bytes):
            data = self._encode(method, path, payload, headers, "application/octet-stream")
        else:
            body = None if payload is None else json.dumps(payload).encode()
            data = self._encode(method, path, body, headers)
        for attempt in range(3):
            fresh = not self._idle
            conn = self._idle.pop() if self._idle else await self._connect()
            try:
                await conn.stream.send_all(data)
                status, head = await conn.read_head()
                content = b"".join([piece async for piece in conn.chunks(head)])
            except (EOFError, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await conn.stream.aclose()
                if fresh and attempt > 0:
                    raise
                continue
            if conn.reusable:
                self._idle.append(conn)
            else:
                await conn.stream.aclose()
            response = Response(status, head, content)
            if check and not 200 <= status < 300:
                raise HttpError(status, content, f"{method} {path}")
            return response
        raise HttpError(0, b"", f"{method} {path}: no answer after 3 connections")

    @asynccontextmanager
    async def stream(self, path: str, headers: dict[str, str] | None = None) -> AsyncIterator[_Body]:
        """A GET whose body is read as it arrives, on a connection of its own."""
        conn = await self._connect()
        try:
            await conn.stream.send_all(self._encode("GET", path, None, headers))
            status, head = await conn.read_head()
            if status != 200:
                content = b"".join([piece async for piece in conn.chunks(head)])
                raise HttpError(status, content, f"GET {path}")
            yield _Body(conn, head)
        finally:
            await conn.stream.aclose()

    async def aclose(self) -> None:
        for conn in self._idle:
            await conn.stream.aclose()
        self._idle.clear()

    # The daemon's routes.

    async def start(self, kind: str = "workbench_bash", **spec: Any) -> dict[str, Any]:
        """POST a start; the record (terminal when foreground and it ended within the wait)."""
        key = {"Idempotency-Key": "bench-" + secrets.token_hex(12)}
        record: dict[str, Any] = (await self.request("POST", f"/v1/executions/{kind}", spec, key)).json()
        return record

    async def wait(self, execution_id: str, wait_ms: int = 600_000) -> dict[str, Any]:
        """Long-polls until the execution is terminal (or `wait_ms` passed); the record."""
        body = {"waitTimeoutMs": wait_ms}
        answer = (await self.request("POST", f"/v1/executions/{execution_id}/wait", body)).json()
        record: dict[str, Any] = answer["execution"]
        return record

    async def wait_terminal(self, execution_id: str) -> dict[str, Any]:
        while True:
            record = await self.wait(execution_id)
            if record["status"] in TERMINAL:
                return record

    async def cancel(self, execution_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = (
            await self.request("POST", f"/v1/executions/{execution_id}/cancel", {})
        ).json()
        return answer

    async def get(self, execution_id: str) -> dict[str, Any]:
        record: dict[str, Any] = (await self.request("GET", f"/v1/executions/{execution_id}")).json()
        return record

    async def delete(self, execution_id: str) -> None:
        await self.request("DELETE", f"/v1/executions/{execution_id}", check=False)

    async def list_all(self, status: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = (
                "limit=1000"
                + (f"&status={status}" if status else "")
                + (f"&cursor={cursor}" if cursor else "")
            )
            page = (await self.request("GET", f"/v1/executions?{query}")).json()
            out.extend(page["executions"])
            cursor = page.get("nextCursor")
            if not cursor:
                return out


TERMINAL = frozenset({"completed", "failed", "cancelled", "timed_out", "partial_failed"})


class _Body:
    def __init__(self, conn: _Connection, headers: dict[str, str]) -> None:
        self._conn, self._headers = conn, headers

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._conn.chunks(self._headers)


@dataclass
class SseEvent:
    event: str
    id: int | None
    data: str


class SseParser:
    """Splits a `text/event-stream` body into events (comments dropped).

    The benchmarks' own clients compete with the daemon for the machine's cores, so this parse
    costs one pass over the bytes, however the stream is cut: lines are found with a one-byte
    search (`memchr`), each from where the last one stopped, and only a field's value is decoded.
    (A search for the blank line itself, two bytes, runs some thirty times slower; searching all
    that was pending again for every piece made the parse of a 64 KiB event grow with the square
    of its pieces.)
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        #: Where the search for the end of the unfinished line goes on.
        self._scan = 0
        self._event = "message"
        self._id: int | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SseEvent]:
        pending = self._pending
        pending += data
        events = []
        start = 0  # of the unfinished line
        at = pending.find(b"\n", self._scan)
        while at >= 0:
            if at == start:  # a blank line ends the event
                if self._data or self._id is not None:
                    events.append(SseEvent(self._event, self._id, "\n".join(self._data)))
                self._event, self._id, self._data = "message", None, []
            elif pending[start] != 0x3A:  # a line that starts with ":" is a comment
                self._field(pending, start, at)
            start = at + 1
            at = pending.find(b"\n", start)
        if start:
            del pending[:start]
        self._scan = len(pending)
        return events

    def _field(self, pending: bytearray, start: int, end: int) -> None:
        colon = pending.find(b":", start, end)
        if colon < 0:
            name, value = pending[start:end].decode("utf-8"), ""
        else:
            name = pending[start:colon].decode("utf-8")
            begin = colon + 2 if colon + 1 < end and pending[colon + 1] == 0x20 else colon + 1
            value = pending[begin:end].decode("utf-8")
        if name == "event":
            self._event = value
        elif name == "id":
            self._id = int(value)
        elif name == "data":
            self._data.append(value)
