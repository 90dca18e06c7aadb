"""Transports between a client and a real daemon, for the tests of what the client does when the
connection fails: each sends the requests on to the daemon and spoils what a test asks for."""

from __future__ import annotations

from collections.abc import Callable

import httpx


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
