"""The operations of the session and file routes, for the OpenAPI document (see `api.operations`)."""

from __future__ import annotations

from typing import Any

from api.operations import AUTHENTICATED, WITH_BODY, Op, Param
from api.requests import IntParam
from workbench.wire.files import (
    MAX_LIST_DEPTH,
    FileEntry,
    FileList,
    MoveRequest,
    Session,
    SessionList,
    UploadResult,
)
from workbench.wire.models import MAX_WAIT_TIMEOUT_MS

#: The integer query parameters of the file routes (read by the handlers with these objects).
LIST_DEPTH = IntParam("depth", 1, minimum=0, maximum=MAX_LIST_DEPTH)
WATCH_TIMEOUT = IntParam("timeoutMs", 0, maximum=MAX_WAIT_TIMEOUT_MS)

SESSION = "/v1/sessions/{sessionId}"
FILES = SESSION + "/files"
#: Errors of every route of a session's workspace.
IN_SESSION = (*AUTHENTICATED, "not_found")
#: Errors of a path in the workspace: one that leads out (422), one in the way (409).
IN_WORKSPACE = (*IN_SESSION, "invalid_request", "conflict")
WRITES = (*IN_WORKSPACE, "quota_exceeded")

_ETAG = ({"type": "string"}, "the file's version; it changes with every write")
_IF_MATCH: Param = (
    "If-Match",
    {"type": "string"},
    "`*` or ETags: write (or delete) only if the file is one of these versions now; else 412",
)
_IF_NONE_MATCH_WRITE: Param = (
    "If-None-Match",
    {"type": "string"},
    "`*`: write only if nothing is at the path (create, never replace); else 412",
)
_PATH_QUERY: Param = (
    "path",
    {"type": "string"},
    "a path in the workspace (default: the workspace itself)",
)
WATCH_DESCRIPTION = """Each change is `event: TYPE` and `data: FILE_EVENT_JSON` (a `FileEvent`),
without an `id:` (a watch is not replayed: watch again and list). A `: watching` comment comes
first, once every directory under the path is watched; `: keepalive` after 15 s of quiet. The
stream ends when the daemon stops, after `timeoutMs`, or once the watched directory is gone."""


def _read(path: str, operation_id: str) -> Op:
    headers: tuple[Param, ...] = (
        ("Range", {"type": "string"}, "one range: `bytes=a-b`, `bytes=a-` or `bytes=-n`"),
        ("If-None-Match", {"type": "string"}, "`*` or ETags: 304 when the file is one of these versions"),
    )
    flag: dict[str, Any] = {"type": "string", "maxLength": 0}
    return Op(
        "get",
        path,
        operation_id,
        "Read a file (honours Range), or list a directory",
        ok={200: (FileList, "a directory, or any path with `?list`: its listing")},
        errors=(*IN_WORKSPACE, "range_not_satisfiable"),
        query=(
            ("list", flag, "a listing whatever the path is (a file lists as itself)"),
            (LIST_DEPTH.name, LIST_DEPTH.schema(), "how many levels a listing goes down (0: the path alone)"),
        ),
        headers=headers if path.endswith("{path}") else (),
        response_headers={200: (("ETag", *_ETAG),)},
        raw={
            200: ("application/octet-stream", "the file's bytes (a directory's answer is its listing)"),
            206: ("application/octet-stream", "the range asked for (`Content-Range`)"),
            304: ("application/octet-stream", "not modified: the file is the version `If-None-Match` names"),
        },
    )


def file_operations() -> list[Op]:
    """Every operation of the session and file routes."""
    return [
        Op(
            "get",
            "/v1/sessions",
            "listSessions",
            "The principal's sessions",
            ok={200: (SessionList, "every session with a workspace")},
        ),
        Op(
            "delete",
            "/v1/sessions",
            "deleteSessions",
            "Remove every session of the principal, with their files",
            ok={204: (None, "gone")},
            errors=(*AUTHENTICATED, "conflict"),
        ),
        Op(
            "get", SESSION, "getSession", "One session", ok={200: (Session, "the session")}, errors=IN_SESSION
        ),
        Op(
            "delete",
            SESSION,
            "deleteSession",
            "Remove a session's workspace and every file in it",
            ok={204: (None, "gone")},
            errors=(*IN_SESSION, "conflict"),
        ),
        *_file_routes(),
    ]


def _file_routes() -> list[Op]:
    """The routes of a session's files: read, write, delete, upload, download, move, watch."""
    return [
        _read(FILES, "listWorkspace"),
        _read(FILES + "/{path}", "readFile"),
        Op(
            "put",
            FILES + "/{path}",
            "writeFile",
            "Write a file atomically (its parents made)",
            ok={200: (FileEntry, "replaced"), 201: (FileEntry, "created")},
            errors=(*WRITES, "precondition_failed"),
            headers=(_IF_MATCH, _IF_NONE_MATCH_WRITE),
            response_headers={200: (("ETag", *_ETAG),), 201: (("ETag", *_ETAG),)},
            raw_body=("application/octet-stream", "the file's bytes, at most `WORKBENCH_MAX_FILE_BYTES`"),
        ),
        Op(
            "delete",
            FILES + "/{path}",
            "deleteFile",
            "Remove a file, a symlink or a whole directory",
            ok={204: (None, "gone")},
            errors=(*IN_WORKSPACE, "precondition_failed"),
            headers=(_IF_MATCH,),
        ),
        Op(
            "post",
            FILES + ":upload",
            "uploadFiles",
            "Unpack a tar (plain, gzip, bzip2, xz) or zip archive into the workspace",
            ok={200: (UploadResult, "unpacked")},
            errors=WRITES,
            query=(_PATH_QUERY,),
            raw_body=("application/octet-stream", "the archive, at most `WORKBENCH_MAX_FILE_BYTES`"),
        ),
        Op(
            "get",
            FILES + ":download",
            "downloadFiles",
            "A tar of a directory (or of one file)",
            errors=IN_WORKSPACE,
            query=(_PATH_QUERY,),
            raw={200: ("application/x-tar", "the tar, streamed as it is written")},
        ),
        Op(
            "post",
            FILES + ":move",
            "moveFile",
            "Move (rename) a path inside the workspace",
            MoveRequest,
            ok={200: (FileEntry, "where it is now")},
            errors=(*IN_WORKSPACE, *WITH_BODY),
        ),
        Op(
            "get",
            FILES + ":watch",
            "watchFiles",
            "Follow the changes under a directory (server-sent events, from inotify)",
            errors=IN_WORKSPACE,
            query=(
                _PATH_QUERY,
                (WATCH_TIMEOUT.name, WATCH_TIMEOUT.schema(), "end the stream after this long (0: never)"),
            ),
            raw={200: ("text/event-stream", WATCH_DESCRIPTION)},
        ),
    ]
