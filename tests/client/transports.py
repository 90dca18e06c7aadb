"""Transports between a client and a real daemon, for the tests of what the client does when the
connection fails: each sends the requests on to the daemon and spoils what a test asks for."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import trio


class DropAnswers(httpx.AsyncBaseTransport):
    """Sends each request to the daemon, noting it in `sent`; for the first one `drop` picks, loses
    the answer (as a connection lost once the request went out)."""

    def __init__(self, drop: Callable[[httpx.Request], bool]) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.drop = drop
        self.dropped = 0
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.raw_path.decode()}")
        response = await self.inner.handle_async_request(request)
        if not self.dropped and self.drop(request):
            self.dropped += 1
            await response.aread()
            await response.aclose()
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _EndsEarly(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, seconds: float) -> None:
        self.inner, self.end_at = inner, trio.current_time() + seconds

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self.inner.__aiter__()
        while True:
            chunk: bytes | None = None
            with trio.move_on_after(self.end_at - trio.current_time()):
                chunk = await anext(chunks, b"")
            if not chunk:
                return  # the end, as a proxy ends it: cleanly
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class EndStreams(httpx.AsyncBaseTransport):
    """Ends every event stream `seconds` after it opened, as a proxy with a short timeout does."""

    def __init__(self, seconds: float) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seconds = seconds
        self.streams = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path.endswith("/events/stream") and response.status_code == 200:
            self.streams += 1
            stream: Any = response.stream
            response.stream = _EndsEarly(stream, self.seconds)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class RefuseFirst(httpx.AsyncBaseTransport):
    """Refuses the first request as a daemon that is not listening does (httpx's ConnectError:
    it never left), then sends each one to the daemon, noting it in `sent`."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.refused = 0
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self.refused:
            self.refused += 1
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        self.sent.append(f"{request.method} {request.url.raw_path.decode()}")
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
