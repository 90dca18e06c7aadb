"""The record's preview, cut from plain bytes: no processes, no daemon (files only in the last test).

API.md v2, "Output in the record": each stream's text whole when it fits in `previewBytes`, else
its head (a quarter) and tail (three quarters) joined by one elision line, counted in the
process's own bytes; correct for multi-byte text and invalid bytes.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_pieces import live
from workbench.core.layout import ExecutionDir
from workbench.core.plain import plain
from workbench.core.preview import elision_line, execution_preview, stream_preview
from workbench.wire.status import ExecutionStatus

ELIDED = re.compile(r"\[\.\.\. (\d+) bytes elided \.\.\.\]\n")


def preview(data: bytes, limit: int, *, final: bool = True, is_plain: bool = False) -> tuple[str, int]:
    reads: list[tuple[int, int]] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return data[offset : offset + length]

    text, elided = stream_preview(read, len(data), limit, final=final, plain=is_plain)
    # Never the whole file: at most the limit from each end.
    assert sum(length for _, length in reads) <= 2 * max(limit, 0)
    return text, elided


def parts(text: str, data: bytes) -> tuple[str, int, str]:
    """(head, N, tail) of an elided preview of `data`: the head without the newline that the
    elision line is given when the head ends mid-line."""
    match = ELIDED.search(text)
    assert match is not None, text
    shown, count, tail = text[: match.start()], int(match[1]), text[match.end() :]
    size = len(data)
    tails = _raw(tail, data, start=False)
    assert tails, f"{tail!r} is not the decoding of the last bytes"
    for head in (shown, shown[:-1]) if shown.endswith("\n") else (shown,):
        if any(count == size - h - t for h in _raw(head, data, start=True) for t in tails):
            return head, count, tail
    raise AssertionError(f"the elided count {count} does not add up: {text!r}")


def _raw(part: str, data: bytes, *, start: bool) -> set[int]:
    """How many of `data`'s bytes (from its start or its end) decode to `part` (a lone bad byte
    and a cut character both decode to one U+FFFD: there may be several)."""
    pieces = ((n, data[:n] if start else data[len(data) - n :]) for n in range(len(data) + 1))
    return {n for n, piece in pieces if piece.decode("utf-8", "replace") == part}


def test_small_output_is_whole() -> None:
    assert preview(b"hello\n", 16384) == ("hello\n", 0)
    assert preview(b"", 16384) == ("", 0)


def test_exactly_at_the_limit_is_whole_and_one_more_byte_is_not() -> None:
    assert preview(b"a" * 100, 100) == ("a" * 100, 0)
    text, elided = preview(b"a" * 101, 100)
    head, count, tail = parts(text, b"a" * 101)
    assert count == elided == 101 - len(head) - len(tail)
    assert len(text.encode()) <= 100


def test_a_limit_of_zero_shows_nothing_and_elides_everything() -> None:
    assert preview(b"hello", 0) == ("", 5)
    assert preview(b"", 0) == ("", 0)


def test_a_limit_too_small_for_the_elision_line_shows_nothing() -> None:
    assert preview(b"x" * 1000, 10) == ("", 1000)


def test_head_is_a_quarter_and_tail_three_quarters() -> None:
    data = b"".join(b"line %05d\n" % i for i in range(10_000))
    limit = 16384
    text, elided = preview(data, limit)
    head, count, tail = parts(text, data)
    room = limit - len(elision_line(len(data))) - 1
    assert len(head) == room // 4 and len(tail) == room - room // 4
    assert data.startswith(head.encode()) and data.endswith(tail.encode())
    assert count == elided == len(data) - len(head) - len(tail)
    assert len(text.encode()) <= limit


def test_multi_byte_characters_are_never_split() -> None:
    data = "日本語テキスト".encode() * 500  # 3 bytes a character
    text, elided = preview(data, 1000)
    head, count, tail = parts(text, data)
    assert "\ufffd" not in text
    assert data.startswith(head.encode()) and data.endswith(tail.encode())
    assert count == elided == len(data) - len(head.encode()) - len(tail.encode())
    assert len(text.encode()) <= 1000


def test_invalid_bytes_become_replacement_characters_within_the_limit() -> None:
    data = b"\xff\xfe" * 40  # 80 bytes that each become a 3-byte U+FFFD
    text, elided = preview(data, 100)
    assert len(text.encode()) <= 100
    head, count, tail = parts(text, data)
    assert set(head + tail) == {"\ufffd"}
    assert count == elided == 80 - len(head) - len(tail)  # one bad byte, one U+FFFD


def test_invalid_bytes_that_fit_as_text_are_whole() -> None:
    assert preview(b"ok \xff\n", 100) == ("ok \ufffd\n", 0)


def test_a_character_cut_off_at_the_end_waits_while_running_and_is_bad_at_the_end() -> None:
    data = b"caf\xc3"
    assert preview(data, 100, final=False) == ("caf", 0)
    assert preview(data, 100, final=True) == ("caf\ufffd", 0)


def test_plain_keeps_the_last_state_of_redrawn_lines_and_drops_escapes() -> None:
    bar = "".join(f"\r\x1b[32m{'#' * i:<20}\x1b[0m {i * 5}%" for i in range(21))
    raw = f"Collecting numpy\n{bar}\nInstalled\n"
    assert plain(raw) == f"Collecting numpy\n{'#' * 20} 100%\nInstalled\n"
    assert preview(raw.encode(), 16384, is_plain=True) == (plain(raw), 0)


def test_plain_terminal_line_model() -> None:
    assert plain("abcdef\rXY\n") == "XYcdef\n"
    assert plain("abcdef\rXY\x1b[K\n") == "XY\n"
    assert plain("abc\x08\x08Z\n") == "aZc\n"
    assert plain("windows\r\nline\r\n") == "windows\nline\n"
    assert plain("\x1b]0;title\x07text \x1b[1;31mred\x1b[m\x07\n") == "text red\n"
    assert plain("tab\tkept\n") == "tab\tkept\n"
    assert plain("cut at the end \x1b[") == "cut at the end "


def test_plain_preview_of_a_long_redraw_is_cut_first_then_made_plain() -> None:
    raw = "".join(f"\rprogress {i:06d}" for i in range(10_000)).encode() + b"\ndone\n"
    text, elided = preview(raw, 4096, is_plain=True)
    assert text.endswith("done\n") and "\r" not in text
    assert len(text.encode()) <= 4096
    assert elided > 0 and ELIDED.search(text) is not None


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(
        st.sampled_from(
            [b"a", b"\n", "é".encode(), "€".encode(), "𝄞".encode(), b"\xff", b"\xe2\x82", b"\x80"]
        ),
        max_size=400,
    ).map(b"".join),
    limit=st.integers(min_value=0, max_value=300),
    final=st.booleans(),
)
def test_any_bytes_any_limit(data: bytes, limit: int, final: bool) -> None:
    """Within the limit; whole exactly when the text fits; the elided count adds up; head and tail
    are the decoding of the stream's own first and last bytes."""
    text, elided = preview(data, limit, final=final)
    assert len(text.encode()) <= limit or (text == "" and elided == len(data))
    if elided == 0:
        if final:
            assert text == data.decode("utf-8", "replace")
        return
    if text == "":
        assert elided == len(data)
        return
    if final:
        assert parts(text, data)[1] == elided
    assert 0 < elided <= len(data)


@pytest.mark.parametrize("limit", [1, 31, 32, 33, 64])
def test_tiny_limits_stay_within_the_limit(limit: int) -> None:
    text, elided = preview(b"z" * 500, limit)
    assert len(text.encode()) <= limit
    assert 0 < elided <= 500


async def test_a_record_still_queued_in_the_store_shows_no_output(tmp_path: Path) -> None:
    """The preview is read from the spool files, the status from the store: the running status
    commits lazily, a few ms after the spawn, so the files can hold output first. A record must
    not show output while it says `queued` (nothing it ran is committed yet)."""
    directory = ExecutionDir(tmp_path)
    directory.stdout.write_bytes(b"first\n")
    directory.stderr.write_bytes(b"")
    row = live(1).row  # queued
    queued = await execution_preview(directory, row, final=False)
    assert (queued.stdout, queued.stdout_elided_bytes) == ("", 0)
    running = await execution_preview(directory, replace(row, status=ExecutionStatus.RUNNING), final=False)
    assert running.stdout == "first\n"
