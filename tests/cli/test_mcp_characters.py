"""The character arithmetic of `workbench mcp`'s logs by byte offset, without a daemon: a page
never cuts a character, and the first character of a page is counted in its own bytes."""

from __future__ import annotations

import pytest

from workbench.cli.mcp.handlers import _first_character, _whole_characters

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


@pytest.mark.parametrize(
    ("chunk", "final", "expected"),
    [
        (b"ab", False, ("a", 1)),
        ("é".encode(), False, ("é", 2)),
        ("€x".encode(), False, ("€", 3)),
        (b"\xc3(ab", False, ("\ufffd", 1)),  # a lead byte without its follower is one U+FFFD
        (b"\xff!", False, ("\ufffd", 1)),
        (b"\xe2\x82", False, ("", 0)),  # the start of a character still being written
        (b"\xe2\x82", True, ("\ufffd", 2)),  # ... or one that never will be: the stream ended
        (b"", True, ("", 0)),
    ],
)
def test_the_first_character_and_its_bytes(chunk: bytes, final: bool, expected: tuple[str, int]) -> None:
    assert _first_character(chunk, final=final) == expected


def test_whole_characters_leave_a_cut_one_for_the_next_page() -> None:
    data = ("é" * 3 + "€").encode() + b"\xff"
    for size in range(1, len(data) + 1):
        text, used = _whole_characters(data[:size], final=size == len(data))
        assert text.encode("utf-8", "replace") == data[:used].decode("utf-8", "replace").encode()
        assert used <= size and (size - used) < 3
