"""The routes of sessions and their workspaces' files (`docs/api.md`, "Sessions and files").

Each handler parses, makes one call of the workspace face (`workbench.core.workspace`) and
serialises. A file body (`PUT`, `files:upload`) is streamed to disk as it arrives, under
`WORKBENCH_MAX_FILE_BYTES` instead of the 1 MiB of JSON bodies: `FileRequest` sets that limit
when the request is made, and the app's guard leaves such bodies to the handler.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import wraps
from typing import Any

import trio
from quart import Response, g, request
from quart_trio import QuartTrio
from quart_trio.wrappers.request import TrioRequest
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.routing import PathConverter

from api.download import file_chunks, parse_range
from api.errors import error_response, from_exception, json_response
from api.files_operations import LIST_DEPTH, WATCH_TIMEOUT
from api.requests import authenticate, check_query, parse_body, session_alive
from workbench.core.auth import EXECUTE, READ
from workbench.core.daemon import Daemon
from workbench.core.files import Opened
from workbench.core.waiting import first_of
from workbench.wire.errors import BadRequest, NotFound, PayloadTooLarge, WorkbenchError
from workbench.wire.files import MoveRequest, SessionList

SESSION = "/v1/sessions/<session_id>"
FILES = SESSION + "/files"
#: The routes whose body is a file, streamed by the handler (method, path pattern).
_FILE_BODY = re.compile(r"/v1/sessions/[^/]+/files(?:/.*|:upload)")
_CHUNK = 1024 * 1024
KEEPALIVE_S = 15.0


def file_body(method: str, path: str) -> bool:
    """Whether a request's body is a file that its handler streams (not JSON read up front)."""
    return method in ("PUT", "POST") and _FILE_BODY.fullmatch(path) is not None


def too_large(path: str, limit: int) -> PayloadTooLarge:
    """The 413 of a file body (`file_body`) over `limit` (`WORKBENCH_MAX_FILE_BYTES`)."""
    what = "archive" if path.endswith(":upload") else "file"
    return PayloadTooLarge(f"the {what} is larger than {limit} bytes")


def request_class(max_file_bytes: int) -> type[TrioRequest]:
    """The app's request class: a file body may be up to `max_file_bytes`, others as configured."""

    class FileRequest(TrioRequest):
        def __init__(self, method: str, scheme: str, path: str, *args: Any, **kw: Any) -> None:
            if file_body(method, path):
                kw["max_content_length"] = max_file_bytes
            super().__init__(method, scheme, path, *args, **kw)

    return FileRequest


class FilePathConverter(PathConverter):
    """A path of the workspace in the URL: anything after `files/`, even `/etc` (refused as
    absolute, with a 422, by the handler, rather than matching no route)."""

    regex = r"[\s\S]*"  # anything, a newline too (`.` stops at one): the handler refuses what is no path
    part_isolating = False  # it spans `/`s


async def _body(limit: int) -> AsyncIterator[bytes]:
    """The request's body as it arrives; notes in `g` when it was read to its end."""
    try:
        async for chunk in request.body:
            yield chunk
    except RequestEntityTooLarge:
        raise too_large(request.path, limit) from None
    g.file_body_read = True


def _precondition(name: str) -> str | None:
    value = request.headers.get(name)
    if value is not None and (not value.strip() or len(value) > 1024):
        raise BadRequest(f"{name} must be `*` or a list of ETags")
    return value


def _list_flag() -> bool:
    raw = request.args.get("list")
    if raw is None:
        return False
    if raw != "":
        raise BadRequest("query parameter list takes no value (`?list`)")
    return True


async def _refused(exc: WorkbenchError) -> Response:
    """The error of a request whose file body may be partly unread: drained when it is small,
    else the connection is closed (the rest of the body cannot be taken for a next request)."""
    response = from_exception(exc)
    if file_body(request.method, request.path) and not getattr(g, "file_body_read", False):
        if (request.content_length or 0) <= _CHUNK:
            with trio.move_on_after(5):
                async for _ in request.body:
                    pass
        response.headers["Connection"] = "close"
    return response


def _handles_body(handler: Callable[..., Awaitable[Response]]) -> Callable[..., Awaitable[Response]]:
    @wraps(handler)
    async def wrapped(**kw: Any) -> Response:
        try:
            return await handler(**kw)
        except WorkbenchError as exc:
            return await _refused(exc)

    return wrapped


def register(app: QuartTrio, daemon: Daemon) -> None:
    """Add the session and file routes to `app`."""
    app.url_map.converters["filepath"] = FilePathConverter
    _sessions(app, daemon)
    _files(app, daemon)
    _transfers(app, daemon)


def _sessions(app: QuartTrio, daemon: Daemon) -> None:
    """The principal's sessions: listed, read, removed."""
    workspaces = daemon.workspace.workspaces

    @app.get("/v1/sessions")
    async def list_sessions() -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        found = await workspaces.sessions(principal.name)
        return json_response(SessionList(sessions=found))

    @app.delete("/v1/sessions")
    async def delete_sessions() -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        if request.path.endswith("/"):
            # A session id left empty (`.../sessions/$UNSET`, or `.`, which URL parsers resolve
            # to it) names no session: it must not remove them all.
            raise NotFound("no session has an empty id (to remove every session: DELETE /v1/sessions)")
        await workspaces.remove_all(principal.name)
        return Response("", status=204)

    @app.get(SESSION)
    async def get_session(session_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        return json_response(await workspaces.session(principal.name, session_id))

    @app.delete(SESSION)
    async def delete_session(session_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await workspaces.remove(principal.name, session_id)
        return Response("", status=204)


def _files(app: QuartTrio, daemon: Daemon) -> None:
    """One path of a workspace: read (or listed), written, deleted."""
    files = daemon.workspace.files
    limit = daemon.settings.max_file_bytes

    async def read(session_id: str, path: str = "") -> Response:
        principal = authenticate(daemon, READ)
        check_query(("list", "depth"))
        listing, depth = _list_flag(), LIST_DEPTH.read()
        if_none_match = _precondition("If-None-Match")
        path = _exact(path, "raw_path")
        opened = None if listing else await files.open(principal.name, session_id, path)
        if opened is None:
            found = await files.listing(principal.name, session_id, path, depth)
            return json_response(found)
        return _file_response(opened, if_none_match)

    app.add_url_rule(FILES, "files_root", read, methods=["GET"])
    app.add_url_rule(FILES + "/<filepath:path>", "files_read", read, methods=["GET"])

    @_handles_body
    async def write(session_id: str, path: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        if_match, if_none_match = _precondition("If-Match"), _precondition("If-None-Match")
        entry, created = await files.write(
            principal.name,
            session_id,
            _exact(path, "raw_path"),
            _body(limit),
            length=request.content_length,
            if_match=if_match,
            if_none_match=if_none_match,
        )
        headers = {"ETag": entry.etag} if entry.etag else None
        return json_response(entry, 201 if created else 200, headers)

    app.add_url_rule(FILES + "/<filepath:path>", "files_write", write, methods=["PUT"])

    async def delete(session_id: str, path: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await files.delete(principal.name, session_id, _exact(path, "raw_path"), _precondition("If-Match"))
        return Response("", status=204)

    app.add_url_rule(FILES + "/<filepath:path>", "files_delete", delete, methods=["DELETE"])


def _transfers(app: QuartTrio, daemon: Daemon) -> None:
    """Trees up and down, moves and the watch."""
    face = daemon.workspace
    files, transfers = face.files, face.transfers
    limit = daemon.settings.max_file_bytes

    @app.post(FILES + ":upload")
    @_handles_body
    async def upload(session_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query(("path",))
        path = _exact(request.args.get("path", ""), "query_string")
        result = await transfers.upload(
            principal.name, session_id, path, _body(limit), request.content_length
        )
        return json_response(result)

    @app.get(FILES + ":download")
    async def download(session_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query(("path",))
        path = _exact(request.args.get("path", ""), "query_string")
        name, chunks = await transfers.download(principal.name, session_id, path)
        headers = {"Content-Disposition": f'attachment; filename="{_quoted(name)}"'}
        response = Response(chunks, status=200, content_type="application/x-tar", headers=headers)
        response.timeout = None
        return response

    @app.post(FILES + ":move")
    async def move(session_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        body = await parse_body(MoveRequest)
        return json_response(await files.move(principal.name, session_id, body))

    @app.get(FILES + ":watch")
    async def watch(session_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query(("path", "timeoutMs"))
        timeout_ms = WATCH_TIMEOUT.read()
        path = _exact(request.args.get("path", ""), "query_string")
        watching = await face.watch(principal.name, session_id, path)
        return _watch_response(daemon, watching, timeout_ms, session_alive(daemon))


def _exact(path: str, part: str) -> str:
    """`path` as the client wrote it. A percent-escape that is not UTF-8 (`%ff`) would name
    another file (the URL's path decodes it as U+FFFD, its query keeps it as the text `%FF`): such
    a path is 400, not renamed."""
    raw = request.scope.get(part) or b""
    assert isinstance(raw, bytes)
    if b"%" in raw and ("\ufffd" in path or part == "query_string"):
        try:
            if part == "raw_path":
                urllib.parse.unquote_to_bytes(raw).decode("utf-8")
            else:
                urllib.parse.parse_qsl(raw.decode("latin-1"), keep_blank_values=True, errors="strict")
        except UnicodeDecodeError:
            where = "path" if part == "raw_path" else "query"
            raise BadRequest(
                f"the URL's {where} has a percent-escape that is not UTF-8 (such as %ff)"
            ) from None
    return path


def _quoted(name: str) -> str:
    return "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)


def _file_response(opened: Opened, if_none_match: str | None) -> Response:
    """The file's bytes (`Range`: one range, 206; 416 when it cannot be met; 304 for a match)."""
    size, fd = opened.size, opened.fd
    headers = {"Accept-Ranges": "bytes", "ETag": opened.etag}
    if if_none_match is not None and (
        if_none_match.strip() == "*" or opened.etag in if_none_match.split(",")
    ):
        os.close(fd)
        return Response("", status=304, headers=headers)
    start, end, status = 0, size - 1, 200
    header = request.headers.get("Range")
    if header:
        parsed = parse_range(header, size)
        if parsed is None:
            os.close(fd)
            headers["Content-Range"] = f"bytes */{size}"
            message = f"the Range {header[:100]!r} cannot be satisfied: the file has {size} bytes"
            return error_response("range_not_satisfiable", message, headers=headers)
        start, end = parsed
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    length = max(0, end - start + 1)
    headers["Content-Length"] = str(length)
    if opened.data is not None:
        os.close(fd)
        return Response(
            opened.data[start : start + length],
            status=status,
            content_type="application/octet-stream",
            headers=headers,
        )

    response = Response(
        file_chunks(fd, start, length, _CHUNK),
        status=status,
        content_type="application/octet-stream",
        headers=headers,
    )
    response.timeout = None
    return response


def _watch_response(daemon: Daemon, watching: Any, timeout_ms: int, alive: Callable[[], bool]) -> Response:
    """The SSE stream of a watch: one frame per change; ends when the daemon stops, after
    `timeoutMs` (when given), once the watched directory is deleted, or with the browser's
    session that opened it (`alive`: looked at after every tick of the store's watches, at once
    after a logout)."""
    ticked = daemon.service.store.watches.ticked

    async def ended() -> None:
        while alive():
            await ticked.wait_changed(ticked.version)

    async def frames() -> AsyncIterator[bytes]:
        try:
            yield b": watching\n\n"
            with trio.move_on_after(timeout_ms / 1000 if timeout_ms else float("inf")):
                while not daemon.stopping.is_set() and not watching.closed and alive():
                    events: list[Any] = []

                    async def take(out: list[Any] = events) -> None:
                        out.extend(await watching.take())

                    with trio.move_on_after(KEEPALIVE_S) as quiet:
                        await first_of(take, daemon.stopping.wait, ended)
                    if quiet.cancelled_caught:
                        yield b": keepalive\n\n"
                        continue
                    text = "".join(
                        f"event: {e.type}\ndata: {json.dumps(e.wire(), ensure_ascii=False)}\n\n"
                        for e in events
                    )
                    if text:
                        yield text.encode("utf-8")
                    if any(e.type == "deleted" and e.path == "/".join(watching.top) for e in events):
                        return
        finally:
            watching.close()

    response = Response(
        frames(),
        status=200,
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None
    return response
