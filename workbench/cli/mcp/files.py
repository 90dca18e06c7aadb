"""The file tools of `workbench mcp`: a session's workspace read, written and listed through the
client's `files(session)`, so that a model never quotes a file through a shell."""

from __future__ import annotations

import base64
import binascii
import codecs

from workbench.cli.mcp.handlers import LONGEST_CHARACTER, WORKSPACES, Answer
from workbench.cli.mcp.tools import ListFilesArguments, ReadFileArguments, WriteFileArguments
from workbench.client.aio import AsyncClient
from workbench.wire.errors import NotFound


def _relative(session_id: str, path: str) -> str:
    """`path`, which must be relative to the workspace: an absolute one is refused, saying so (and
    with the path it means, when the workspace is known from a run of this server)."""
    if not path.startswith("/"):
        return path
    workspace = WORKSPACES.get(session_id)
    if workspace is None:
        where = "the directory bash and code run in without cwd"
    else:
        where = workspace
        inside = path.rstrip("/") + "/"
        if inside.startswith(workspace.rstrip("/") + "/"):
            rest = inside[len(workspace.rstrip("/")) + 1 :].rstrip("/")
            where += f"; {path!r} is {rest!r}" if rest else f"; {path!r} is the workspace itself, ''"
    raise ValueError(f"paths are relative to the session's workspace ({where}), not absolute: {path!r}")


def _text(chunk: bytes, final: bool) -> str | None:
    """`chunk` as text up to its last whole character (a character the page's edge cuts is left
    for the next page), or None when it is not UTF-8."""
    try:
        return codecs.utf_8_decode(chunk, "strict", final)[0]
    except UnicodeDecodeError:
        return None


async def read_file(client: AsyncClient, args: ReadFileArguments) -> Answer:
    _relative(args.session_id, args.path)
    files = client.files(args.session_id)
    found = await files.list(args.path, depth=0)
    if found.type != "file" or not found.entries:
        raise ValueError(f"{args.path!r} is a {found.type}, not a file: list it with list_files")
    entry = found.entries[0]
    chunk = await files.read(args.path, args.offset, args.offset + args.max_bytes)
    text = _text(chunk, args.offset + len(chunk) >= entry.size_bytes)
    if text == "" and chunk:  # one character longer than maxBytes: that character, whole
        chunk = await files.read(args.path, args.offset, args.offset + LONGEST_CHARACTER)
        first = (_text(chunk, args.offset + len(chunk) >= entry.size_bytes) or "")[:1]
        text, chunk = (first, first.encode("utf-8")) if first else (None, chunk[: args.max_bytes])
    if text is None:
        text, encoding = base64.b64encode(chunk).decode("ascii"), "base64"
    else:
        chunk, encoding = chunk[: len(text.encode("utf-8"))], "utf-8"
    end = args.offset + len(chunk)
    done = end >= entry.size_bytes
    data = {
        "sessionId": args.session_id,
        "path": entry.path,
        "sizeBytes": entry.size_bytes,
        "offset": args.offset,
        "nextOffset": end,
        "done": done,
        "encoding": encoding,
        "content": text,
        "etag": entry.etag,
    }
    tail = "that is all of it." if done else f"more follows: read again with offset {end}."
    note = " (not UTF-8: the content is base64)" if encoding == "base64" else ""
    return Answer(f"{text}\n--- bytes {args.offset}-{end} of {entry.size_bytes}{note}; {tail}", data)


async def write_file(client: AsyncClient, args: WriteFileArguments) -> Answer:
    _relative(args.session_id, args.path)
    if args.encoding == "base64":
        try:
            content: bytes | str = base64.b64decode(args.content, validate=True)
        except binascii.Error:
            raise ValueError("content is not valid base64 (encoding is base64)") from None
    else:
        content = args.content
    entry = await client.files(args.session_id).write(args.path, content)
    data = {
        "sessionId": args.session_id,
        "path": entry.path,
        "sizeBytes": entry.size_bytes,
        "etag": entry.etag,
    }
    return Answer(f"wrote {entry.path} ({entry.size_bytes} bytes)", data)


async def list_files(client: AsyncClient, args: ListFilesArguments) -> Answer:
    _relative(args.session_id, args.path)
    try:
        listing = await client.files(args.session_id).list(args.path, depth=args.depth)
    except NotFound:
        if args.path.strip("/.") or args.session_id in {s.session_id for s in await client.sessions()}:
            raise
        # A session nothing has used yet (a write or a run makes it): its workspace is empty.
        data = {"sessionId": args.session_id, "path": "", "entries": [], "truncated": False}
        return Answer(f"empty (session {args.session_id!r} has no files yet)", data)
    entries = [
        {"path": e.path, "type": e.type, "sizeBytes": e.size_bytes, "modifiedAt": e.modified_at}
        for e in listing.entries
    ]
    lines = [f"{e.type[0]} {e.size_bytes:>10}  {e.path or '.'}" for e in listing.entries]
    if listing.truncated:
        lines.append("(more entries than one listing holds: list a directory further down)")
    data = {
        "sessionId": args.session_id,
        "path": listing.path,
        "entries": entries,
        "truncated": listing.truncated,
    }
    return Answer("\n".join(lines) or "empty", data)
