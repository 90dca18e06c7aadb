"""OutputCapture: deltas, UTF-8 boundaries, the event budget, artifacts and resume, with plain bytes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

from workbench.core.output import (
    DEFAULT_BUDGET_BYTES,
    DEFAULT_DELTA_MAX_BYTES,
    STREAMS,
    CaptureEvent,
    Delta,
    OutputCapture,
    Stream,
)

M = DEFAULT_DELTA_MAX_BYTES
BUDGET = DEFAULT_BUDGET_BYTES
CHARS = ["é", "€", "😀"]  # 2, 3 and 4 bytes in UTF-8


def deltas_of(events: Iterable[CaptureEvent], stream: Stream | None = None) -> list[Delta]:
    return [e for e in events if isinstance(e, Delta) and (stream is None or e.stream == stream)]


def text_of(events: Iterable[CaptureEvent], stream: Stream = "stdout") -> str:
    return "".join(d.text for d in deltas_of(events, stream))


def enc(delta: Delta) -> int:
    return len(delta.text.encode("utf-8"))


def check_deltas(deltas: Sequence[Delta], data: bytes, delta_max: int, start: int = 0) -> None:
    """Each delta fits, covers the next raw bytes exactly, and is exactly their decoding."""
    offset = start
    for delta in deltas:
        assert delta.raw_bytes > 0
        assert 0 < enc(delta) <= delta_max
        assert delta.start_offset == offset
        assert delta.end_offset == offset + delta.raw_bytes
        raw = data[delta.start_offset - start : delta.end_offset - start]
        assert raw.decode("utf-8", "replace") == delta.text
        offset = delta.end_offset


def feed_and_close(capture: OutputCapture, data: bytes) -> list[CaptureEvent]:
    """Feed all of `data` to stdout at once, then reach its EOF."""
    return [*capture.feed("stdout", data), *capture.flush("stdout", final=True)]


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --- construction ---------------------------------------------------------------------------


def test_defaults_match_the_api_settings() -> None:
    capture = OutputCapture()
    assert (capture.delta_max_bytes, capture.budget_bytes) == (65536, 5242880)
    assert not capture.truncated
    assert capture.event_bytes == 0
    assert [capture.total_bytes(s) for s in STREAMS] == [0, 0]
    assert capture.flush_all(final=True) == []
    assert not any(capture.keep_artifact(s) for s in STREAMS)


@pytest.mark.parametrize(("delta_max", "budget"), [(3, 10), (0, 10), (4, -1)])
def test_rejects_bad_limits(delta_max: int, budget: int) -> None:
    with pytest.raises(ValueError):
        OutputCapture(delta_max_bytes=delta_max, budget_bytes=budget)


def test_smallest_limits_are_accepted() -> None:
    capture = OutputCapture(delta_max_bytes=4, budget_bytes=0)
    assert capture.feed("stdout", b"") == []
    assert not capture.truncated


def test_rejects_unknown_stream() -> None:
    capture = OutputCapture()
    with pytest.raises(ValueError, match="stdin"):
        capture.feed("stdin", b"x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stdin"):
        capture.flush("stdin")  # type: ignore[arg-type]


def test_accepts_bytearray_and_memoryview() -> None:
    capture = OutputCapture(delta_max_bytes=4)
    events = capture.feed("stdout", bytearray(b"ab")) + capture.feed("stdout", memoryview(b"cdef"))
    assert [(d.text, d.end_offset) for d in deltas_of(events)] == [("abcd", 4)]
    assert capture.total_bytes("stdout") == 6


# --- the delta limit ------------------------------------------------------------------------


def test_exactly_delta_max_bytes_of_ascii_is_one_delta() -> None:
    capture = OutputCapture()
    events = capture.feed("stdout", b"a" * M)
    assert events == [Delta(stream="stdout", text="a" * M, raw_bytes=M, end_offset=M)]
    assert capture.pending_bytes("stdout") == 0
    assert capture.flush_all(final=True) == []


def test_one_byte_more_makes_two_deltas() -> None:
    capture = OutputCapture()
    events = capture.feed("stdout", b"a" * (M + 1))
    assert [(d.raw_bytes, d.end_offset) for d in deltas_of(events)] == [(M, M)]
    assert capture.pending_bytes("stdout") == 1
    assert capture.flush("stdout") == [Delta(stream="stdout", text="a", raw_bytes=1, end_offset=M + 1)]
    assert capture.event_bytes == M + 1


def test_less_than_a_delta_waits_for_flush() -> None:
    capture = OutputCapture()
    assert capture.feed("stdout", b"hello ") == []
    assert capture.feed("stdout", b"world\n") == []
    assert capture.flush("stderr") == []
    assert capture.flush("stdout") == [Delta("stdout", "hello world\n", 12, 12)]
    assert capture.flush("stdout") == []


def test_a_delta_is_emitted_as_soon_as_a_full_one_is_pending() -> None:
    capture = OutputCapture(delta_max_bytes=8)
    assert capture.feed("stdout", b"abcdefg") == []
    assert capture.feed("stdout", b"h") == [Delta("stdout", "abcdefgh", 8, 8)]
    events = capture.feed("stdout", b"x" * 20)
    assert [d.raw_bytes for d in deltas_of(events)] == [8, 8]
    assert capture.flush("stdout", final=True) == [Delta("stdout", "xxxx", 4, 28)]


def test_a_large_chunk_becomes_many_full_deltas() -> None:
    capture = OutputCapture()
    data = b"0123456789abcdef" * (M * 3 // 16 + 7)
    events = [*capture.feed("stdout", data), *capture.flush("stdout")]
    deltas = deltas_of(events)
    assert [d.raw_bytes for d in deltas] == [M, M, M, len(data) - 3 * M]
    check_deltas(deltas, data, M)


# --- UTF-8 boundaries -----------------------------------------------------------------------


@pytest.mark.parametrize("char", CHARS)
@pytest.mark.parametrize("before", range(M - 4, M + 1))
def test_multibyte_character_straddling_the_delta_cut(char: str, before: int) -> None:
    encoded = char.encode()
    data = b"a" * before + encoded + b"z" * 10
    capture = OutputCapture()
    deltas = deltas_of(feed_and_close(capture, data))
    check_deltas(deltas, data, M)
    assert "".join(d.text for d in deltas) == data.decode()
    fits = before + len(encoded) <= M
    assert deltas[0].raw_bytes == (M if fits else before)  # the z's fill what the character leaves
    assert (char in deltas[0].text) == fits


@pytest.mark.parametrize("char", CHARS)
@pytest.mark.parametrize("before", range(M - 4, M + 1))
def test_multibyte_character_fed_one_byte_at_a_time_across_the_cut(char: str, before: int) -> None:
    data = b"a" * (before - 8) + (b"b" * 8 + char.encode() + b"c" * 8)
    whole = OutputCapture()
    expected = deltas_of(feed_and_close(whole, data))

    capture = OutputCapture()
    events = capture.feed("stdout", data[: before - 8])
    for i in range(before - 8, len(data)):
        events += capture.feed("stdout", data[i : i + 1])
    events += capture.flush("stdout", final=True)
    assert deltas_of(events) == expected


def test_every_position_with_tiny_deltas_and_one_byte_feeds() -> None:
    text = "aé€😀b😀😀€éé a€" * 3
    data = text.encode()
    for delta_max in range(4, 12):
        capture = OutputCapture(delta_max_bytes=delta_max)
        events: list[CaptureEvent] = []
        for i in range(len(data)):
            events += capture.feed("stdout", data[i : i + 1])
        events += capture.flush("stdout", final=True)
        deltas = deltas_of(events)
        check_deltas(deltas, data, delta_max)
        assert "".join(d.text for d in deltas) == text
        # feed cut them as long as they could be: the next character (<= 4 bytes) did not fit
        assert all(enc(d) > delta_max - 4 for d in deltas[:-1])
        assert not capture.keep_artifact("stdout")


def test_four_byte_character_split_across_three_reads() -> None:
    capture = OutputCapture()
    assert capture.feed("stdout", b"\xf0") == []
    assert capture.flush("stdout") == []
    assert capture.feed("stdout", b"\x9f\x98") == []
    assert capture.flush("stdout") == []
    assert capture.pending_bytes("stdout") == 3
    assert capture.offset("stdout") == 0
    assert capture.feed("stdout", b"\x80") == []
    assert capture.flush("stdout") == [Delta("stdout", "😀", 4, 4)]
    assert not capture.keep_artifact("stdout")


def test_flush_keeps_an_incomplete_character_pending() -> None:
    capture = OutputCapture()
    capture.feed("stdout", b"price: \xe2\x82")
    assert capture.flush("stdout") == [Delta("stdout", "price: ", 7, 7)]
    assert capture.pending_bytes("stdout") == 2
    capture.feed("stdout", b"\xac\n")
    assert capture.flush("stdout") == [Delta("stdout", "€\n", 4, 11)]


# --- invalid UTF-8 --------------------------------------------------------------------------


def test_invalid_bytes_become_replacement_characters() -> None:
    capture = OutputCapture()
    capture.feed("stdout", b"ok\xffok\xc0\xaf!")
    capture.feed("stderr", b"fine \xef\xbf\xbd\n")  # a real U+FFFD is valid UTF-8
    out = capture.flush_all(final=True)
    assert text_of(out, "stdout") == "ok\ufffdok\ufffd\ufffd!"
    assert deltas_of(out, "stdout")[0].raw_bytes == 8
    assert text_of(out, "stderr") == "fine \ufffd\n"
    assert capture.invalid_utf8("stdout")
    assert capture.keep_artifact("stdout")
    assert not capture.invalid_utf8("stderr")
    assert not capture.keep_artifact("stderr")


@pytest.mark.parametrize(
    "data",
    [b"\xe2\x82A", b"\xf0\x9f\x98A", b"\xe0\x80\x80", b"\xed\xa0\x80x", b"\xf4\x90\x80\x80", b"\x80\xbf\xfe"],
)
def test_replacement_matches_python_decoding(data: bytes) -> None:
    capture = OutputCapture(delta_max_bytes=4)
    events: list[CaptureEvent] = []
    for i in range(len(data)):
        events += capture.feed("stdout", data[i : i + 1])
    events += capture.flush("stdout", final=True)
    check_deltas(deltas_of(events), data, 4)
    assert text_of(events) == data.decode("utf-8", "replace")
    assert capture.keep_artifact("stdout")


def test_truncated_surrogate_held_back_by_python_is_emitted_on_flush() -> None:
    # CPython's incremental decoder holds b"\xed\xa0" back although nothing can complete it.
    capture = OutputCapture()
    capture.feed("stdout", b"a\xed\xa0")
    assert capture.flush("stdout") == [Delta("stdout", "a\ufffd\ufffd", 3, 3)]
    capture.feed("stdout", b"\x80b")
    assert capture.flush("stdout") == [Delta("stdout", "\ufffdb", 2, 5)]


def test_replacement_characters_count_three_bytes_against_the_delta_limit() -> None:
    data = b"\xff" * M
    capture = OutputCapture()
    events = [*capture.feed("stdout", data), *capture.flush("stdout")]
    deltas = deltas_of(events)
    assert [d.raw_bytes for d in deltas] == [M // 3, M // 3, M // 3, M % 3]
    assert enc(deltas[0]) == M - M % 3
    check_deltas(deltas, data, M)


@pytest.mark.parametrize("before", range(M - 7, M + 1))
def test_invalid_bytes_at_the_delta_cut(before: int) -> None:
    data = b"a" * before + b"\xe2\x82" + b"\xff" + "€".encode() + b"\xf0\x9f" + b"zz"
    capture = OutputCapture()
    deltas = deltas_of(feed_and_close(capture, data))
    check_deltas(deltas, data, M)
    assert "".join(d.text for d in deltas) == data.decode("utf-8", "replace")
    assert M - 3 <= enc(deltas[0]) <= M


def test_dangling_sequence_at_eof_becomes_a_replacement_character() -> None:
    capture = OutputCapture()
    capture.feed("stdout", b"ab\xf0\x9f\x98")
    capture.feed("stderr", b"cd")
    assert capture.flush("stdout") == [Delta("stdout", "ab", 2, 2)]
    assert not capture.keep_artifact("stdout")
    assert capture.flush("stdout", final=True) == [Delta("stdout", "\ufffd", 3, 5)]
    assert capture.flush("stderr", final=True) == [Delta("stderr", "cd", 2, 2)]
    assert capture.invalid_utf8("stdout")
    assert capture.keep_artifact("stdout")
    assert not capture.keep_artifact("stderr")


def test_dangling_sequence_joins_the_last_delta_when_it_fits() -> None:
    capture = OutputCapture()
    capture.feed("stdout", b"ab\xe2")
    assert capture.flush_all(final=True) == [Delta("stdout", "ab\ufffd", 3, 3)]


def test_dangling_sequence_after_a_nearly_full_delta_gets_its_own() -> None:
    capture = OutputCapture(delta_max_bytes=4)
    assert capture.feed("stdout", b"abc\xe2\x82") == []
    assert capture.flush("stdout", final=True) == [
        Delta("stdout", "abc", 3, 3),
        Delta("stdout", "\ufffd", 2, 5),
    ]
