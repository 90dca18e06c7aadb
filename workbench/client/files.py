"""The files of a session's workspace, for both clients: `wb.files(session)`, written once.

Each function here is a method of `Files` and `AsyncFiles` (with `files` in place of `self`),
described as the client's own methods are (a plan of steps, see `workbench.client.plan`) and
performed by the client that made the handle. The requests are built here too.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from workbench.client import calls
from workbench.client.base import Base
from workbench.client.calls import Call, _expect, error_from, segment
from workbench.client.config import seconds_to_ms
from workbench.client.plan import BROKEN, NEXT_LINE, READ_BODY, Described, Item, Open, Plan, Stream, send
from workbench.client.sessions import session_path
from workbench.client.sse import FrameReader
from workbench.wire.errors import WorkbenchError
from workbench.wire.files import FileEntry, FileEvent, FileList, UploadResult

F = TypeVar("F", bound=Callable[..., Any])

#: Filled by the decorators below: every method of `Files` and `AsyncFiles`.
FILE_METHODS: dict[str, Described] = {}


class FilesBase:
    """A session's workspace as a client sees it: which client, which session."""

    def __init__(self, client: Base, session_id: str) -> None:
        self._client = client
        self.session_id = session_id

    @property
    def client(self) -> Base:
        return self._client

    def _path(self, path: str = "") -> str:
        base = f"{session_path(self.session_id)}/files"
        if not path:
            return base
        # `.` and `..` are sent escaped: as they are, the URL would be resolved before it leaves
        # (to another route), not refused by the daemon as a path out of the workspace.
        # A leading `/` is kept (`files//etc`): the daemon refuses the absolute path, as documented.
        segments = path.split("/")
        escaped = [segment(s) for s in segments]
        return f"{base}/{'/'.join(escaped)}"

    def _action(self, name: str) -> str:
        return f"{session_path(self.session_id)}/files:{name}"


def _describe(plan: F, iterates: bool) -> F:
    FILE_METHODS[plan.__name__] = Described(plan.__name__, plan, iterates)
    return plan


def file_method(plan: F) -> F:
    """A method of both handles returning the result of `plan` (its signature kept for type checkers)."""
    return _describe(plan, iterates=False)


def file_iterator(plan: F) -> F:
    """A method of both handles iterating the items of `plan` (its signature kept for type checkers)."""
    return _describe(plan, iterates=True)


def _entry(response: httpx.Response) -> FileEntry:
    return FileEntry.model_validate_json(response.content)


@file_method
def read(files: FilesBase, path: str, start: int = 0, end: int | None = None) -> Plan[bytes]:
    """The bytes of the file at `path` from offset `start` up to `end` (exclusive; None: the end)."""
    headers: dict[str, str] = {}
    if start or end is not None:
        headers["Range"] = f"bytes={start}-{'' if end is None else end - 1}"

    def parse(response: httpx.Response) -> bytes:
        if response.status_code == 416:
            return b""
        if response.status_code not in (200, 206):
            raise error_from(response)
        if response.headers.get("content-type", "").startswith("application/json"):
            raise IsADirectoryError(f"{path!r} is a directory: list it with list()")
        return response.content

    return (yield from send(files.client, Call("GET", files._path(path), parse, headers=headers)))


@file_method
def write(
    files: FilesBase, path: str, data: bytes | str, *, if_match: str | None = None, create_only: bool = False
) -> Plan[FileEntry]:
    """Write `data` (bytes, or text as UTF-8) to `path` atomically, its parents made; its entry.

    `if_match`: only if the file is still that version (an `etag`), else `PreconditionFailed`;
    `create_only`: only if nothing is there yet.
    """
    body = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    headers = {"Content-Type": "application/octet-stream"}
    if if_match is not None:
        headers["If-Match"] = if_match
    if create_only:
        headers["If-None-Match"] = "*"
    # A plain write sent twice writes the same bytes; a conditional one would fail its condition
    # the second time, after the first won: only the plain one is sent again after a broken link.
    retry = if_match is None and not create_only
    parse = _expect(200, 201)(_entry)
    call = Call("PUT", files._path(path), parse, content=body, headers=headers, retry=retry)
    return (yield from send(files.client, call))


@file_method
def list(files: FilesBase, path: str = "", *, depth: int = 1) -> Plan[FileList]:
    """`path` and what is under it to `depth` levels (0: the path alone); a file lists as itself."""

    @_expect(200)
    def parse(response: httpx.Response) -> FileList:
        return FileList.model_validate_json(response.content)

    call = Call("GET", files._path(path), parse, params={"list": "", "depth": depth})
    return (yield from send(files.client, call))


@file_method
def delete(files: FilesBase, path: str, *, if_match: str | None = None) -> Plan[None]:
    """Remove a file, a symlink (not what it points to) or a whole directory."""
    headers = {"If-Match": if_match} if if_match is not None else {}
    call = Call("DELETE", files._path(path), _expect(204)(lambda r: None), headers=headers, retry=False)
    yield from send(files.client, call)


@file_method
def move(files: FilesBase, source: str, destination: str, *, overwrite: bool = False) -> Plan[FileEntry]:
    """Move `source` to `destination` inside the workspace (parents made); where it is now."""
    body = {"from": source, "to": destination, "overwrite": overwrite}
    call = Call("POST", files._action("move"), _expect(200)(_entry), json=body, retry=False)
    return (yield from send(files.client, call))


@file_method
def upload(files: FilesBase, source: str | os.PathLike[str] | bytes, path: str = "") -> Plan[UploadResult]:
    """Put a local directory (sent as a tar), a local tar or zip file, or an archive's bytes under
    `path` in the workspace; what was unpacked."""
    body = source if isinstance(source, bytes) else _archive_of(Path(source))

    @_expect(200)
    def parse(response: httpx.Response) -> UploadResult:
        return UploadResult.model_validate_json(response.content)

    headers = {"Content-Type": "application/octet-stream"}
    call = Call("POST", files._action("upload"), parse, content=body, params={"path": path}, headers=headers)
    return (yield from send(files.client, call))


def _archive_of(source: Path) -> bytes:
    if not source.is_dir():
        return source.read_bytes()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for child in sorted(source.iterdir()):
            tar.add(child, arcname=child.name)  # symlinks go in as symlinks
    return out.getvalue()


@file_method
def download(
    files: FilesBase, path: str = "", to: str | os.PathLike[str] | None = None
) -> Plan[bytes | None]:
    """A tar of the directory (or file) at `path`: its bytes, or, with `to`, unpacked into that
    local directory (made if missing; files and links of the same names replaced, directories
    merged, nothing written outside it) and None."""

    @_expect(200)
    def parse(response: httpx.Response) -> bytes:
        return response.content

    data = yield from send(files.client, Call("GET", files._action("download"), parse, params={"path": path}))
    if to is None:
        return data
    unpack(data, Path(to))
    return None


def unpack(data: bytes, target: Path) -> None:
    """Unpack the tar `data` into `target` (made if missing), symlinks as they are (`tar x` does
    the same: a link writes nothing, wherever it points).

    Every member is checked first: one that would be written outside (an absolute path, `..`,
    through a symlink of the archive, a hard link to no earlier file of it) or that is no file,
    directory or link refuses the whole archive. What passes is unpacked into a new empty
    directory beside `target` (where only the archive's own links exist, so the check is
    complete), then moved into `target`: files and links of the same names are replaced (a link
    itself, never what it points to), directories merged. A directory of the archive where a
    file or link is, or a file where a directory is, refuses it too. A refusal, or any failure
    before the move, is a WorkbenchError and leaves `target` as it was.
    """
    where = os.path.realpath(target)
    scratch = ""
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = tar.getmembers()
            _check_members(members)
            if os.path.lexists(target) and not os.path.isdir(target):
                raise WorkbenchError(f"{str(target)!r} is not a directory")
            os.makedirs(os.path.dirname(where), exist_ok=True)
            scratch = tempfile.mkdtemp(dir=os.path.dirname(where), prefix=f".{os.path.basename(where)}.")
            try:
                tar.errorlevel = 2  # every failure is one (1 would only log some, and go on)
                tar.extractall(scratch, members=members, filter=_keep_links)
                moves = _moves(scratch, where)
                os.makedirs(where, exist_ok=True)
                for source, destination in moves:
                    os.replace(source, destination)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    except (tarfile.TarError, OSError, WorkbenchError) as exc:
        said = str(exc).replace(scratch, where) if scratch else str(exc)  # not the place it never was
        raise WorkbenchError(f"the download cannot be unpacked into {str(target)!r}: {said}") from exc


def _check_members(members: builtins.list[tarfile.TarInfo]) -> None:
    """Refuse a member written outside, through a symlink of the archive, or of no known kind."""
    links: set[str] = set()  # the archive's symlinks
    files: set[str] = set()  # what a hard link may link to: a file (or hard link) written before
    for member in members:
        name = _inside(member.name)
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise tarfile.TarError(f"{member.name!r} is no file, directory or link")
        # A symlink replaces a link of the same name; anything else on one writes where it points.
        _not_through(links, name, itself=not member.issym(), member=member)
        if member.islnk():
            linked = _inside(member.linkname)
            _not_through(links, linked, itself=True, member=member)
            if linked not in files:
                raise tarfile.TarError(f"{member.name!r} is a hard link to no file of the archive")
        files.discard(name)
        links.discard(name)
        if member.issym():
            links.add(name)
        elif member.isfile() or member.islnk():
            files.add(name)


def _not_through(links: set[str], name: str, *, itself: bool, member: tarfile.TarInfo) -> None:
    parts = name.split("/")
    for i in range(1, len(parts) + (1 if itself else 0)):
        if "/".join(parts[:i]) in links:
            raise tarfile.TarError(f"{member.name!r} would be written through a symlink")


def _inside(name: str) -> str:
    """`name` without `.` segments; a TarError if it is absolute or climbs out (`..`)."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if name.startswith("/") or ".." in parts or not parts:
        raise tarfile.TarError(f"{name!r} would be written outside the directory")
    return "/".join(parts)


#: The owner the `data` filter gives a member: none (typeshed would have a str and an int).
_NO_OWNER: dict[str, Any] = {"uid": None, "gid": None, "uname": None, "gname": None}


def _keep_links(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo:
    """tarfile's `data` filter (safe modes, nothing outside `path`), but a symlink is kept as it
    is, whatever it points to (`_check_members` refused every write through one), its owner
    ignored as the filter does."""
    if member.issym():
        return member.replace(**_NO_OWNER, deep=False)
    return tarfile.data_filter(member, path)


def _moves(source: str, destination: str, under: str = "") -> builtins.list[tuple[str, str]]:
    """What to move from the unpacked tree `source` to `destination`: each entry whose place is
    free or holds a file or link (replaced), a directory's entries where one is already (merged).
    `destination` (a real directory, or missing) is looked at without following a link in it; a
    directory and a non-directory meeting refuse the whole archive, before anything is moved."""
    moves: builtins.list[tuple[str, str]] = []
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        there = os.path.join(destination, entry.name)
        name = f"{under}/{entry.name}" if under else entry.name
        try:
            mode = os.lstat(there).st_mode
        except FileNotFoundError:
            moves.append((entry.path, there))
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and stat.S_ISDIR(mode):
            moves.extend(_moves(entry.path, there, name))
        elif is_dir or stat.S_ISDIR(mode):
            held = "a directory" if is_dir else "a file or link"
            found = "a directory" if stat.S_ISDIR(mode) else "a file or link"
            raise WorkbenchError(f"{name!r} is {held} in the download but {found} in the directory")
        else:
            moves.append((entry.path, there))
    return moves


@file_iterator
def watch(files: FilesBase, path: str = "", *, timeout: float | None = None) -> Stream[FileEvent]:
    """The changes under the directory `path` as they happen (`created`, `modified`, `deleted`,
    and `overflow` when some were missed), for `timeout` seconds (None: until the loop stops).
    Not replayed: a watch that breaks raises `Unavailable`; watch again, and list."""
    params: dict[str, Any] = {"path": path}
    if timeout is not None:
        params["timeoutMs"] = max(1, seconds_to_ms(timeout) or 1)
    call = Call("GET", files._action("watch"), calls._stream_head, params=params, timeout=calls.STREAM_READ_S)
    try:
        response = yield Open(call)
        if response.status_code != 200:
            yield READ_BODY
            call.parse(response)
        reader = FrameReader()
        while (line := (yield NEXT_LINE)) is not None:
            frame = reader.line(line)
            if frame is not None and frame.id is None and frame.data:
                yield Item(_file_event(frame.data))
    except BROKEN as exc:
        raise calls.unreachable(files.client.url, exc) from exc


def _file_event(data: str) -> FileEvent:
    try:
        return FileEvent.model_validate_json(data)
    except ValueError as exc:  # pydantic's ValidationError
        raise WorkbenchError(f"a change of the watch is not what this client expects: {exc}") from exc


def check(cls: type, described: builtins.dict[str, Described]) -> None:
    """Refuse a handle class without every described method made from its plan."""
    for name, item in described.items():
        if getattr(cls.__dict__.get(name), "__wrapped__", None) is not item.plan:
            raise TypeError(f"{cls.__name__}.{name} is not made from its plan in workbench.client.files")
