"""A graceful stop (SIGTERM): every request that arrives meanwhile, and every one still unanswered
when the graceful period ends, gets the JSON `503 unavailable` of API.md, never a bare `500`.

Each request goes over a raw connection, so that what the daemon writes is read as it is."""

from __future__ import annotations

import json
from typing import Any

import httpx
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle

AUTH = b"host: workbench\r\nauthorization: Bearer %s\r\n" % TOKEN.encode()


async def connect(wb: DaemonHandle) -> trio.SocketStream:
    url = httpx.URL(wb.url)
    assert url.host and url.port
    return await trio.open_tcp_stream(url.host, url.port)


async def answer(stream: trio.SocketStream) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of what the daemon writes until it closes the connection."""
    raw = b""
    async with stream:
        try:
            while chunk := await stream.receive_some(65536):
                raw += chunk
        except trio.BrokenResourceError:
            pass
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields = (line.partition(":") for line in lines)
    headers = {name.strip().lower(): value.strip() for name, _, value in fields}
    return int(status_line.split()[1]), headers, body


def unavailable(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    assert status == 503, (status, headers, body)
    assert headers.get("content-type") == "application/json", (headers, body)
    error: dict[str, Any] = json.loads(body)["error"]
    assert error["code"] == "unavailable", error
    return error


async def test_requests_during_a_stop_are_answered_503_unavailable(make_daemon: Any) -> None:
    from api.serve import GRACEFUL_S

    wb: DaemonHandle = await make_daemon()
    # A start whose body never completes: still unanswered when the graceful period ends.
    hung = await connect(wb)
    await hung.send_all(
        b"POST /v1/executions/workbench_bash HTTP/1.1\r\n"
        + AUTH
        + b"content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"
    )
    await trio.sleep(0.2)
    wb.shutdown.set()
    await wb.daemon.stopping.wait()
    # One that arrives once the stop began, on a new connection.
    late = await connect(wb)
    await late.send_all(b"GET /v1/executions HTTP/1.1\r\n" + AUTH + b"\r\n")
    with ceilings.within(10, "the answer to a request made while the daemon stops"):
        error = unavailable(*await answer(late))
    assert "stopping" in error["message"], error
    with ceilings.within(GRACEFUL_S + 10, "the answer to a request the stop cut short"):
        error = unavailable(*await answer(hung))
    assert "stopping" in error["message"], error
