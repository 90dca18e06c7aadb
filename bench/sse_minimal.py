"""`python -m bench.sse_minimal FRAMES PORT`: the least a quart-trio SSE endpoint can be (row 20's
baseline): it serves the frames of FRAMES (SSE text) at `GET /stream`, in writes of as many
events as the daemon's stream puts in one (a page: `PAGE_EVENTS` events, `PAGE_BYTES` at most)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import trio
from api.sse import PAGE_BYTES, PAGE_EVENTS
from hypercorn.config import Config
from hypercorn.trio import serve
from quart import Response
from quart_trio import QuartTrio


def paged(frames: list[bytes]) -> list[bytes]:
    """The frames in pages as `api.sse` writes them (a page ends once it holds PAGE_BYTES)."""
    pages, page, size = [], [], 0
    for frame in frames:
        page.append(frame + b"\n\n")
        size += len(frame) + 2
        if len(page) == PAGE_EVENTS or size >= PAGE_BYTES:
            pages.append(b"".join(page))
            page, size = [], 0
    if page:
        pages.append(b"".join(page))
    return pages


def main(frames_path: str, port: str) -> None:
    frames = Path(frames_path).read_bytes().split(b"\n\n")[:-1]
    pages = paged(frames)
    app = QuartTrio("minimal")

    @app.get("/stream")
    async def stream() -> Response:
        async def body() -> AsyncIterator[bytes]:
            for page in pages:
                yield page

        response = Response(body(), content_type="text/event-stream")
        response.timeout = None
        return response

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    trio.run(serve, app, config)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
