"""The `preview` of a record: the head and tail of each output stream (API.md, "Output in the record").

A stream's preview is at most `limit` bytes of UTF-8 text: the whole stream when its text fits,
else its first quarter and last three quarters of what is left once the elision line is counted,
joined by that one line `[... N bytes elided ...]`. N, the elided byte count, is in the process's
own bytes: the stream's size less the bytes the head and the tail show. Text is what
`decode("utf-8", "replace")` makes of the bytes, cut only between whole characters (or whole runs
of bad bytes), so the head and tail say exactly what the events say of the same bytes.

Only the two ends of a spool file are read (`stream_preview` asks for at most `limit` bytes from
each end), never the whole file: a running execution's preview is made when its record is read,
from the spool files as they are; a finished one's once, at its end, and kept with its record.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

import trio

from workbench.core.layout import ExecutionDir
from workbench.core.plain import plain as make_plain
from workbench.core.store.rows import ExecutionRow
from workbench.wire.models import Preview
from workbench.wire.status import ExecutionStatus

#: Reads `length` bytes at `offset` (fewer only at the end).
Read = Callable[[int, int], bytes]

#: Up to this `previewBytes`, a preview is read on the trio thread: a thread hop would cost more.
INLINE_LIMIT: Final = 64 * 1024

#: The text of the elision line; its length is reserved for the largest count it may show.
ELISION: Final = "[... {} bytes elided ...]\n"


def elision_line(elided: int) -> str:
    """The line that stands for `elided` bytes left out."""
    return ELISION.format(elided)


def stream_preview(read: Read, size: int, limit: int, *, final: bool, plain: bool) -> tuple[str, int]:
    """(text, elided bytes) of a stream of `size` bytes; see the module's docstring.

    `final`: the stream has ended, so an incomplete character at its end is a bad byte (U+FFFD);
    otherwise it is left out until the rest of it is written. `plain`: the head and the tail are
    each made plain (`workbench.core.plain`) after they are cut, so the text may be shorter than
    `limit` and the elided count stays in the process's bytes. A `limit` too small for even the
    elision line shows nothing of a stream that does not fit: its whole size is elided.
    """
    if size <= 0:
        return "", 0
    if limit <= 0:
        return "", size
    whole: bytes | None = None
    if size <= limit:
        whole = read(0, size)
        text, _ = _decode(whole, final=final)
        shown = make_plain(text) if plain else text
        if len(shown.encode("utf-8")) <= limit:
            return shown, 0
        # Bad bytes became U+FFFD, three bytes each: the text is longer than the bytes.
    reserved = len(elision_line(size)) + 1  # +1: the newline that ends a head cut mid-line
    room = limit - reserved
    if room <= 0:
        return "", size
    head_room = room // 4
    tail_room = room - head_room
    head_bytes = whole[:head_room] if whole is not None else read(0, min(head_room, size))
    head, head_used = _fit_head(head_bytes, head_room)
    tail_start = max(head_used, size - tail_room)
    tail_bytes = whole[tail_start:] if whole is not None else read(tail_start, size - tail_start)
    tail, tail_used = _fit_tail(tail_bytes, tail_room, final=final)
    elided = size - head_used - tail_used
    if plain:
        head, tail = make_plain(head), make_plain(tail)
    joint = "\n" if head and not head.endswith("\n") else ""
    return head + joint + elision_line(elided) + tail, elided


def _decode(data: bytes, *, final: bool) -> tuple[str, int]:
    """(text, bytes decoded): an incomplete last character is left undecoded unless `final`."""
    try:
        return codecs.utf_8_decode(data, "strict", final)
    except UnicodeDecodeError:
        return codecs.utf_8_decode(data, "replace", final)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _fit_head(data: bytes, room: int) -> tuple[str, int]:
    """The longest text of whole units from the start of `data` within `room` bytes."""
    text, used = _decode(data, final=False)
    if _size(text) <= room:
        return text, used
    lo, hi = 0, len(data)  # the units of data[:lo] fit; those of data[:hi] do not
    best = ("", 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        text, used = _decode(data[:mid], final=False)
        if _size(text) <= room:
            lo, best = mid, (text, used)
        else:
            hi = mid
    return best


def _unit_start(data: bytes, start: int) -> int:
    """`start`, moved past the continuation bytes of a character that began before it (at most 3)."""
    stop = min(len(data), start + 3)
    while start < stop and data[start] & 0xC0 == 0x80:
        start += 1
    return start


def _fit_tail(data: bytes, room: int, *, final: bool) -> tuple[str, int]:
    """The longest text of whole units at the end of `data` within `room` bytes: (text, bytes shown)."""
    start = _unit_start(data, 0)
    text, _ = _decode(data[start:], final=final)
    if _size(text) <= room:
        return text, len(data) - start
    lo, hi = start, len(data)  # from hi on it fits; from lo on it does not
    best = ("", 0)
    while hi - lo > 1:
        mid = _unit_start(data, (lo + hi) // 2)
        if mid >= hi:
            break
        text, _ = _decode(data[mid:], final=final)
        if _size(text) <= room:
            hi, best = mid, (text, len(data) - mid)
        else:
            lo = mid
    return best


def file_preview(path: Path, limit: int, *, final: bool, plain: bool) -> tuple[str, int]:
    """`stream_preview` of a spool file as it is now; a file that is not there is empty."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return "", 0
    try:
        size = os.fstat(fd).st_size

        def read(offset: int, length: int) -> bytes:
            return os.pread(fd, length, offset)

        return stream_preview(read, size, limit, final=final, plain=plain)
    finally:
        os.close(fd)


def spool_preview(stdout: Path, stderr: Path, limit: int, *, final: bool, plain: bool) -> Preview:
    """The preview of an execution's two spool files (blocking file reads: small ones)."""
    out, out_elided = file_preview(stdout, limit, final=final, plain=plain)
    err, err_elided = file_preview(stderr, limit, final=final, plain=plain)
    return Preview(stdout=out, stderr=err, stdout_elided_bytes=out_elided, stderr_elided_bytes=err_elided)


async def execution_preview(directory: ExecutionDir, row: ExecutionRow, *, final: bool) -> Preview:
    """The preview of an execution as its spool files are now (`final`: its tree is dead).

    A live record still `queued` in the store shows nothing: its running status commits lazily,
    so the files may already hold output that a record read from the store must not show first."""
    if not final and row.status is ExecutionStatus.QUEUED:
        return Preview()
    plain = row.preview_format == "plain"
    if row.preview_bytes <= INLINE_LIMIT:
        return spool_preview(directory.stdout, directory.stderr, row.preview_bytes, final=final, plain=plain)
    return await trio.to_thread.run_sync(
        lambda: spool_preview(directory.stdout, directory.stderr, row.preview_bytes, final=final, plain=plain)
    )


def stored_preview(row: ExecutionRow) -> Preview:
    """The preview kept with a terminal record; for a record kept before previews were, what is
    known without its files: nothing shown, every byte elided."""
    if row.preview_json is not None:
        return Preview.model_validate_json(row.preview_json)
    return Preview(stdout_elided_bytes=row.stdout_bytes, stderr_elided_bytes=row.stderr_bytes)
