"""The CLI commands of a session's workspace: `workbench cp` (docker cp's shape) and `workbench files ls`.

`cp LOCAL SESSION:PATH` writes a file (PUT) or a directory (sent as a tar, `files:upload`);
`cp SESSION:PATH LOCAL` reads a file or a directory (`files:download`, unpacked). As with
`docker cp`, a directory copied to a directory that exists lands inside it under its own name,
and `-` is our stdin or stdout (one file). A local path with a `:` in it is written `./a:b`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from urllib.parse import quote, urlencode

from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_REMOTE = re.compile(r"([A-Za-z0-9._-]{1,64}):(.*)", re.DOTALL)
#: Seconds a file transfer may take beyond an ordinary request.
_TRANSFER_S = 600.0


def remote(text: str) -> tuple[str, str] | None:
    """`SESSION:PATH` → (session, path); None for a local path."""
    if text.startswith(("/", "./", "../")) or text == "-":
        return None
    found = _REMOTE.fullmatch(text)
    return (found.group(1), found.group(2).strip("/")) if found else None


def _files(session: str, path: str = "") -> str:
    base = f"/v1/sessions/{quote(session, safe='')}/files"
    return f"{base}/{quote(path, safe='/')}" if path else base


def _action(session: str, name: str, path: str) -> str:
    return f"/v1/sessions/{quote(session, safe='')}/files:{name}?{urlencode({'path': path})}"


def _send(http: Http, method: str, path: str, data: bytes | None, ok: tuple[int, ...]) -> Any:
    """One request with a raw body on a connection of its own; the JSON answer."""
    conn = http._new()  # the CLI's HTTP sends JSON bodies only; this one is bytes
    headers = {**http._headers, "Content-Type": "application/octet-stream"}
    try:
        response = conn.send(method, path, headers, data, 30.0 + _TRANSFER_S)
        payload = response.read_all()
    except OSError as exc:
        raise http.unreachable(exc) from None
    finally:
        conn.close()
    if response.status not in ok:
        http._raise(response.status, response.headers, payload)
    return json.loads(payload) if payload else None


def _stat(http: Http, session: str, path: str) -> dict[str, Any] | None:
    """The listing of `path` alone (depth 0), or None when nothing is there."""
    try:
        listing: dict[str, Any] = http.json("GET", _files(session, path), query={"list": "", "depth": 0})
    except ApiError as exc:
        if exc.code == "not_found" and not exc.message.startswith("no route"):
            return None
        raise
    return listing


def cmd_cp(http: Http, args: argparse.Namespace) -> int:
    source, target = remote(args.source), remote(args.target)
    if (source is None) == (target is None):
        raise UsageError("cp: one of SOURCE and TARGET must be SESSION:PATH and the other local")
    if target is not None:
        return _upload(http, args.source, *target)
    assert source is not None
    return _download(http, *source, args.target)


def _upload(http: Http, local: str, session: str, path: str) -> int:
    if local != "-" and os.path.isdir(local):
        name = os.path.basename(os.path.normpath(local))
        there = _stat(http, session, path) if path else {"type": "directory"}
        if there is not None and there["type"] == "directory":
            path = f"{path}/{name}" if path else name
        result = _send(http, "POST", _action(session, "upload", path), _tar_of(local), (200,))
        print(f"{session}:{result['path']}: {result['files']} files, {result['sizeBytes']} bytes")
        return 0
    try:
        data = sys.stdin.buffer.read() if local == "-" else _read(local)
    except OSError as exc:
        raise UsageError(f"cp: cannot read {local}: {exc.strerror}") from None
    there = _stat(http, session, path) if path else {"type": "directory"}
    if (there is not None and there["type"] == "directory") or path == "":
        if local == "-":
            raise UsageError("cp: - needs a file name as TARGET (SESSION:PATH/NAME)")
        path = f"{path}/{os.path.basename(local)}" if path else os.path.basename(local)
    _send(http, "PUT", _files(session, path), data, (200, 201))
    return 0


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _tar_of(local: str) -> bytes:
    import tarfile  # only for a directory

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name in sorted(os.listdir(local)):
            tar.add(os.path.join(local, name), arcname=name)  # symlinks go as symlinks
    return out.getvalue()


def _download(http: Http, session: str, path: str, local: str) -> int:
    there = _stat(http, session, path)
    if there is None:
        raise ApiError("not_found", f"no file {path!r} in session {session!r}")
    if there["type"] != "directory":
        if local == "-":
            http.download(_files(session, path), sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return 0
        if os.path.isdir(local):
            local = os.path.join(local, os.path.basename(path))
        partial = f"{local}.partial"
        try:
            with open(partial, "wb") as f:
                http.download(_files(session, path), f)
            os.replace(partial, local)
        except OSError as exc:
            raise UsageError(f"cp: cannot write {local}: {exc.strerror}") from None
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
        return 0
    if local == "-":
        http.download(_action(session, "download", path), sys.stdout.buffer)  # the tar itself
        sys.stdout.buffer.flush()
        return 0
    if os.path.isdir(local):
        local = os.path.join(local, os.path.basename(path) or session)
    buffer = io.BytesIO()
    http.download(_action(session, "download", path), buffer)
    import tarfile

    os.makedirs(local, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(buffer.getvalue())) as tar:
        tar.extractall(local, filter="data")  # nothing lands outside `local`
    return 0


def cmd_files(http: Http, args: argparse.Namespace) -> int:
    where = remote(args.where) if ":" in args.where else None
    if where is None and _REMOTE.fullmatch(args.where + ":"):
        where = (args.where, "")
    if where is None:
        raise UsageError(f"files ls: {args.where!r} is not SESSION or SESSION:DIR")
    session, path = where
    listing = http.json("GET", _files(session, path), query={"list": "", "depth": args.depth})
    if args.json:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    from workbench.cli import render

    rows = [
        [
            e["type"][0] if e["type"] != "other" else "?",
            str(e["sizeBytes"]),
            e["modifiedAt"][:19].replace("T", " "),
            e["path"]
            + ("/" if e["type"] == "directory" else "")
            + (f" -> {e['target']}" if e["target"] else ""),
        ]
        for e in listing["entries"]
    ]
    if rows:
        print(render.table(["T", "SIZE", "MODIFIED", "PATH"], rows))
    return 0
