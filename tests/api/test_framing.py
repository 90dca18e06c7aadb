"""A request that is not valid HTTP/1.1 (h11 cannot frame it) gets the JSON error of API.md like
any other, with the status hypercorn chose for it, and the connection is closed: not hypercorn's
empty `400` (`content-length: 0`). Nothing it asked for is started.

Each request goes over a raw connection to the real daemon: an HTTP client would not send them."""

from __future__ import annotations

import json
from typing import Any

import httpx
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle

BASH = b"POST /v1/executions/workbench_bash HTTP/1.1\r\nhost: workbench\r\nauthorization: Bearer %s\r\n" % (
    TOKEN.encode()
)
START = json.dumps({"command": "touch started", "background": True}).encode()


async def exchange(wb: DaemonHandle, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as it is; the status, headers and body of the answer, read until the
    daemon closes the connection (which it must, within the bound)."""
    url = httpx.URL(wb.url)
    assert url.host and url.port
    with ceilings.within(10, "the answer to a request that is not HTTP/1.1, and the connection's close"):
        stream = await trio.open_tcp_stream(url.host, url.port)
        async with stream:
            await stream.send_all(request)
            raw = b""
            while chunk := await stream.receive_some(65536):
                raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields = (line.partition(":") for line in lines)
    headers = {name.strip().lower(): value.strip() for name, _, value in fields}
    return int(status_line.split()[1]), headers, body


def json_error(status: int, headers: dict[str, str], body: bytes, expected_status: int) -> dict[str, Any]:
    """The `error` of a JSON error answer, after checking how it is framed."""
    assert status == expected_status, (status, headers, body)
    assert headers.get("content-type") == "application/json", headers
    assert headers.get("content-length") == str(len(body)), (headers, body)
    assert headers.get("connection") == "close", headers
    error: dict[str, Any] = json.loads(body)["error"]
    return error


async def nothing_started(wb: DaemonHandle) -> None:
    response = await wb.client.get("/v1/executions")
    assert response.status_code == 200, response.text
    assert response.json()["executions"] == []


async def test_a_content_length_that_is_no_number_is_a_json_400(wb: DaemonHandle) -> None:
    request = BASH + b"content-type: application/json\r\ncontent-length: abc\r\n\r\n" + START
    error = json_error(*await exchange(wb, request), 400)
    assert error["code"] == "bad_request"
    assert "not valid HTTP/1.1" in error["message"] and "Content-Length" in error["message"], error
    await nothing_started(wb)


async def test_a_chunk_size_that_is_no_number_is_a_json_400(wb: DaemonHandle) -> None:
    # A whole JSON body in a first chunk, then a chunk whose size is no hexadecimal number: the
    # body never ends, so the execution it describes never starts.
    chunked = b"%x\r\n%s\r\nzz\r\n" % (len(START), START)
    request = BASH + b"content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n" + chunked
    error = json_error(*await exchange(wb, request), 400)
    assert error["code"] == "bad_request"
    assert "not valid HTTP/1.1" in error["message"] and "chunk" in error["message"], error
    await nothing_started(wb)


async def test_a_head_over_the_limit_is_a_json_431(wb: DaemonHandle) -> None:
    # One byte past the 64 KiB the daemon holds of a head that has not ended: every byte sent is
    # read before the answer, so the close sends no reset that could lose it.
    start = BASH + b"x-padding: "
    request = start + b"a" * (64 * 1024 + 1 - len(start))
    error = json_error(*await exchange(wb, request), 431)
    assert error["code"] == "bad_request"
    assert "65536 bytes" in error["message"], error
    await nothing_started(wb)
