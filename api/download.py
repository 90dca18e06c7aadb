"""Answers that are files: an artifact's bytes (with `Range`; from the node that holds it, when
that is another node of a shared store), and the JSON of an image."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import trio
from quart import Response, request

from api.errors import error_response
from workbench.core.nodecalls import NodeCalls
from workbench.wire.errors import NotFound

_CHUNK = 256 * 1024


async def file_chunks(fd: int, start: int, length: int, chunk_size: int) -> AsyncIterator[bytes]:
    """`length` bytes of open file `fd` from `start`, read off the event loop `chunk_size` at a
    time (fewer if the file is shorter now); closes `fd` at the end."""
    try:
        offset, remaining = start, length
        while remaining > 0:
            chunk = await trio.to_thread.run_sync(os.pread, fd, min(chunk_size, remaining), offset)
            if not chunk:
                break
            offset += len(chunk)
            remaining -= len(chunk)
            yield chunk
    finally:
        os.close(fd)


def image_json(image: Any) -> dict[str, Any]:
    return {
        "name": image.name,
        "description": image.description,
        "languages": image.available_languages,
        "isolation": {
            "filesystem": image.filesystem,
            "network": image.network,
            "pidNamespace": image.filesystem == "sandbox",
        },
        "available": image.available,
        "unavailableReason": image.unavailable_reason,
    }


async def file_response(path: os.PathLike[str] | str, size: int, content_type: str, name: str) -> Response:
    """The file's bytes; a single `Range: bytes=a-b` gets 206 (416 when it cannot be met)."""
    start, end = 0, size - 1
    status = 200
    headers = {
        "Accept-Ranges": "bytes",
        "Content-Disposition": f'attachment; filename="{name}"',
    }
    header = request.headers.get("Range")
    if header:
        parsed = parse_range(header, size)
        if parsed is None:
            headers["Content-Range"] = f"bytes */{size}"
            message = f"the Range {header[:100]!r} cannot be satisfied: the artifact has {size} bytes"
            return error_response("range_not_satisfiable", message, headers=headers)
        start, end = parsed
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    length = max(0, end - start + 1)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(f"artifact {name} is gone") from None

    headers["Content-Length"] = str(length)
    response = Response(
        file_chunks(fd, start, length, _CHUNK), status=status, content_type=content_type, headers=headers
    )
    response.timeout = None
    return response


async def remote_response(calls: NodeCalls, node: str, execution_id: str, name: str) -> Response:
    """An artifact on another node's disk, streamed from that node with the request's `Range`."""
    method = "HEAD" if request.method == "HEAD" else "GET"
    remote = await calls.fetch_artifact(node, execution_id, name, request.headers.get("Range"), method=method)
    content_type = remote.headers.pop("content-type", None)
    response = Response(remote.body, status=remote.status, headers=remote.headers, content_type=content_type)
    response.timeout = None
    return response


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """`bytes=a-b`, `bytes=a-` or `bytes=-n` → (first, last) inclusive; None if unsatisfiable."""
    unit, _, spec = header.partition("=")
    if unit.strip() != "bytes" or "," in spec:
        return None
    first, _, last = spec.strip().partition("-")
    try:
        if first == "":
            n = int(last)
            if n <= 0:
                return None
            return max(0, size - n), size - 1
        a = int(first)
        b = int(last) if last else size - 1
    except ValueError:
        return None
    if a < 0 or a >= size or b < a:
        return None
    return a, min(b, size - 1)
