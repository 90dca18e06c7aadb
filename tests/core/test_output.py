"""OutputCapture: deltas, UTF-8 boundaries, the event budget, artifacts and resume, with plain bytes."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import pytest

from workbench.core.output import (
    DEFAULT_BUDGET_BYTES,
    DEFAULT_DELTA_MAX_BYTES,
    STREAMS,
    CaptureEvent,
    Delta,
    OutputCapture,
    OutputTruncated,
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


# --- the budget -----------------------------------------------------------------------------


def test_exactly_the_budget_is_not_truncated() -> None:
    capture = OutputCapture()
    events = capture.feed("stdout", b"o" * (BUDGET - 1000)) + capture.feed("stderr", b"e" * 1000)
    events += capture.flush_all(final=True)
    assert not any(isinstance(e, OutputTruncated) for e in events)
    assert not capture.truncated
    assert capture.event_bytes == BUDGET
    assert sum(d.raw_bytes for d in deltas_of(events)) == BUDGET
    assert not capture.keep_artifact("stdout")
    assert not capture.keep_artifact("stderr")


def test_one_byte_over_the_budget_is_truncated() -> None:
    capture = OutputCapture()
    events = capture.feed("stdout", b"o" * (BUDGET - 1000)) + capture.feed("stderr", b"e" * 1000)
    events += capture.flush_all()
    assert capture.feed("stderr", b"x") == [
        OutputTruncated(streams=("stderr",), event_bytes=BUDGET, budget_bytes=BUDGET)
    ]
    assert capture.truncated
    assert capture.event_bytes == BUDGET
    assert capture.keep_artifact("stdout")
    assert capture.keep_artifact("stderr")
    assert capture.total_bytes("stderr") == 1001


def test_budget_plus_one_in_a_single_feed() -> None:
    capture = OutputCapture()
    events = capture.feed("stdout", b"a" * (BUDGET + 1))
    assert events[-1] == OutputTruncated(streams=("stdout",), event_bytes=BUDGET, budget_bytes=BUDGET)
    deltas = deltas_of(events)
    assert len(deltas) == len(events) - 1 == BUDGET // M
    assert deltas[-1].end_offset == BUDGET
    assert capture.total_bytes("stdout") == BUDGET + 1
    assert capture.flush_all(final=True) == []


@pytest.mark.parametrize(("char", "cut"), [(c, n) for c in CHARS for n in range(1, len(c.encode()))])
def test_budget_cutting_a_character_leaves_it_out_whole(char: str, cut: int) -> None:
    encoded = char.encode()
    capture = OutputCapture()
    head = b"a" * (BUDGET - cut)
    events = capture.feed("stdout", head) + capture.feed("stdout", encoded + b"tail")
    deltas = deltas_of(events)
    assert events[-1] == OutputTruncated(streams=("stdout",), event_bytes=BUDGET - cut, budget_bytes=BUDGET)
    assert deltas[-1].end_offset == BUDGET - cut
    assert sum(d.raw_bytes for d in deltas) == capture.event_bytes == BUDGET - cut
    assert "".join(d.text for d in deltas) == "a" * (BUDGET - cut)


def test_budget_ending_right_after_a_character_keeps_it() -> None:
    capture = OutputCapture(budget_bytes=7)
    events = capture.feed("stdout", "abc😀".encode() + b"!")
    assert text_of(events) == "abc😀"
    assert events[-1] == OutputTruncated(streams=("stdout",), event_bytes=7, budget_bytes=7)


def test_interleaved_streams_share_one_budget() -> None:
    capture = OutputCapture(budget_bytes=10)
    assert capture.feed("stdout", b"abc") == []
    assert capture.feed("stderr", b"defg") == []
    assert capture.feed("stdout", b"hij") == []
    assert not capture.truncated
    events = capture.feed("stderr", b"kl")
    assert events == [
        Delta("stdout", "abchij", 6, 6),
        Delta("stderr", "defg", 4, 4),
        OutputTruncated(streams=("stderr",), event_bytes=10, budget_bytes=10),
    ]


def test_the_other_streams_incomplete_character_is_cut_too() -> None:
    capture = OutputCapture(budget_bytes=8)
    assert capture.feed("stderr", b"x\xe2\x82") == []
    events = capture.feed("stdout", b"abcdefg")
    assert events == [
        Delta("stdout", "abcde", 5, 5),
        Delta("stderr", "x", 1, 1),
        OutputTruncated(streams=("stdout", "stderr"), event_bytes=6, budget_bytes=8),
    ]


def test_truncation_is_reported_once_and_nothing_follows() -> None:
    capture = OutputCapture(budget_bytes=4)
    events = capture.feed("stdout", b"abcdef")
    assert events == [Delta("stdout", "abcd", 4, 4), OutputTruncated(("stdout",), 4, 4)]
    for stream in STREAMS:
        assert capture.feed(stream, b"more \xff bytes") == []
        assert capture.flush(stream) == []
        assert capture.flush(stream, final=True) == []
    assert capture.flush_all(final=True) == []
    assert capture.total_bytes("stdout") == 6 + 12
    assert capture.total_bytes("stderr") == 12
    assert capture.event_bytes == 4
    assert capture.offset("stdout") == 4
    assert capture.offset("stderr") == 0


def test_zero_budget_truncates_at_the_first_byte() -> None:
    capture = OutputCapture(budget_bytes=0)
    assert capture.feed("stderr", b"") == []
    assert capture.feed("stderr", b"x") == [OutputTruncated(("stderr",), 0, 0)]
    assert capture.keep_artifact("stderr")
    assert not capture.keep_artifact("stdout")  # it wrote nothing


def test_after_truncation_feeding_is_cheap() -> None:
    capture = OutputCapture()
    chunk = b"x" * (1 << 20)
    events: list[CaptureEvent] = []
    for _ in range(1024):  # 1 GiB: only counted, never copied or decoded
        events += capture.feed("stdout", chunk)
    assert sum(isinstance(e, OutputTruncated) for e in events) == 1
    assert capture.total_bytes("stdout") == 1 << 30
    assert capture.event_bytes == BUDGET


# --- resume ---------------------------------------------------------------------------------


def test_resume_is_equivalent_to_one_capture() -> None:
    data = ("héllo wörld € 😀 \n" * 20000).encode() + b"\xff tail \xe2\x82"
    whole = OutputCapture()
    expected = deltas_of(feed_and_close(whole, data))
    for half in (len(data) // 2, len(data) // 2 + 1, len(data) // 2 + 2, len(data) - 1):
        first = OutputCapture()
        events = deltas_of(first.feed("stdout", data[:half]))  # then the daemon dies
        offset = events[-1].end_offset
        assert offset == first.offset("stdout")
        resumed = OutputCapture.resume(
            offsets={"stdout": offset, "stderr": 0},
            truncated=first.truncated,
            invalid_utf8={s: first.invalid_utf8(s) for s in STREAMS},
        )
        events += deltas_of(feed_and_close(resumed, data[offset:]))
        assert events == expected
        assert resumed.total_bytes("stdout") == len(data)
        assert resumed.event_bytes == len(data)
        assert resumed.keep_artifact("stdout") == whole.keep_artifact("stdout") is True


def test_resume_reads_a_pending_incomplete_character_again() -> None:
    first = OutputCapture()
    first.feed("stderr", b"ab\xe2")
    assert first.flush("stderr") == [Delta("stderr", "ab", 2, 2)]
    resumed = OutputCapture.resume(offsets={"stderr": 2}, truncated=False)
    assert resumed.total_bytes("stderr") == 2
    assert resumed.event_bytes == 2
    resumed.feed("stderr", b"\xe2\x82\xac")
    assert resumed.flush("stderr") == [Delta("stderr", "€", 3, 5)]


def test_resume_keeps_counting_the_budget_from_the_offsets() -> None:
    resumed = OutputCapture.resume(budget_bytes=10, offsets={"stdout": 6, "stderr": 3}, truncated=False)
    assert resumed.feed("stderr", b"x") == []
    assert resumed.feed("stdout", b"y") == [Delta("stderr", "x", 1, 4), OutputTruncated(("stdout",), 10, 10)]


def test_resume_after_truncation_only_counts() -> None:
    resumed = OutputCapture.resume(budget_bytes=10, offsets={"stdout": 10}, truncated=True)
    assert resumed.feed("stdout", b"abc") == []
    assert resumed.feed("stderr", b"d") == []
    assert resumed.total_bytes("stdout") == 13
    assert resumed.keep_artifact("stdout")
    assert resumed.keep_artifact("stderr")


def test_resume_over_a_shrunk_budget_truncates_at_the_next_byte() -> None:
    resumed = OutputCapture.resume(budget_bytes=5, offsets={"stdout": 8}, truncated=False)
    assert resumed.feed("stdout", b"z") == [OutputTruncated(("stdout",), 8, 5)]


def test_resume_remembers_invalid_utf8() -> None:
    resumed = OutputCapture.resume(offsets={"stdout": 5}, truncated=False, invalid_utf8={"stdout": True})
    resumed.feed("stdout", b"fine")
    resumed.flush_all(final=True)
    assert resumed.keep_artifact("stdout")
    assert not resumed.keep_artifact("stderr")


@pytest.mark.parametrize(
    ("offsets", "invalid"),
    [({"stdout": -1}, {}), ({"stdin": 3}, {}), ({}, {"stdin": True})],
)
def test_resume_rejects_bad_state(offsets: dict[Stream, int], invalid: dict[Stream, bool]) -> None:
    with pytest.raises(ValueError):
        OutputCapture.resume(offsets=offsets, truncated=False, invalid_utf8=invalid)


# --- properties over random output and chunkings --------------------------------------------

PIECES = [
    b"a",
    b"b",
    b"\n",
    "é".encode(),
    "€".encode(),
    "😀".encode(),
    "\ufffd".encode(),
    b"\xff",
    b"\x80",
    b"\xbf",
    b"\xc0",
    b"\xc2",
    b"\xe0",
    b"\xe2\x82",
    b"\xed",
    b"\xa0",
    b"\xf0",
    b"\xf0\x9f",
    b"\xf4",
    b"\x90",
]


def random_output(rng: random.Random, pieces: int) -> bytes:
    if rng.random() < 0.3:
        return rng.randbytes(pieces)
    return b"".join(rng.choice(PIECES) for _ in range(pieces))


def chunks(rng: random.Random, data: bytes, most: int) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        size = rng.randint(1, most)
        out.append(data[i : i + size])
        i += size
    return out


@pytest.mark.parametrize("seed", range(60))
def test_random_interleavings_keep_every_invariant(seed: int) -> None:
    rng = random.Random(seed)
    delta_max = rng.choice([4, 5, 6, 7, 9, 16, 64])
    data: dict[Stream, bytes] = {s: random_output(rng, rng.randrange(0, 250)) for s in STREAMS}
    total = sum(len(d) for d in data.values())
    budget = rng.choice([total, total - 1, total + 1, rng.randrange(0, total + 1), 10**9])
    budget = max(budget, 0)
    capture = OutputCapture(delta_max_bytes=delta_max, budget_bytes=budget)

    queues = {s: chunks(rng, data[s], rng.choice([1, 3, 8, 40])) for s in STREAMS}
    admitted = dict.fromkeys(STREAMS, 0)  # bytes of each stream fed within the budget
    events: list[CaptureEvent] = []
    markers = 0
    while any(queues.values()):
        stream = rng.choice([s for s in STREAMS if queues[s]])
        chunk = queues[stream].pop(0)
        admitted[stream] += max(0, min(len(chunk), budget - sum(admitted.values())))
        got = capture.feed(stream, chunk)
        if markers:
            assert got == []
        truncation = [e for e in got if isinstance(e, OutputTruncated)]
        if truncation:
            markers += 1
            assert got[-1] is truncation[0]
            assert len(truncation) == 1
            assert stream in truncation[0].streams
        else:  # feed cuts deltas as long as they can be: the next unit (<= 4 bytes) did not fit
            assert all(enc(d) > delta_max - 4 for d in deltas_of(got))
        events += got
        if rng.random() < 0.15:
            events += capture.flush(rng.choice(STREAMS))
    events += capture.flush_all(final=True)

    truncated = total > budget
    assert markers == int(truncated) == int(capture.truncated)
    assert capture.event_bytes == sum(capture.offset(s) for s in STREAMS) <= budget
    for s in STREAMS:
        deltas = deltas_of(events, s)
        check_deltas(deltas, data[s], delta_max)
        offset = capture.offset(s)
        assert offset == (deltas[-1].end_offset if deltas else 0)
        assert "".join(d.text for d in deltas) == data[s][:offset].decode("utf-8", "replace")
        assert capture.total_bytes(s) == len(data[s])
        if truncated:
            assert 0 <= admitted[s] - offset <= 3  # at most one cut character is left out
            assert capture.keep_artifact(s) == bool(data[s])
        else:
            assert offset == len(data[s])
            assert capture.keep_artifact(s) == (not is_utf8(data[s]))


@pytest.mark.parametrize("seed", range(40))
def test_deltas_do_not_depend_on_chunking(seed: int) -> None:
    rng = random.Random(1000 + seed)
    delta_max = rng.choice([4, 5, 8, 13, 32])
    data = random_output(rng, rng.randrange(1, 400))
    whole = OutputCapture(delta_max_bytes=delta_max)
    expected = feed_and_close(whole, data)

    capture = OutputCapture(delta_max_bytes=delta_max)
    events: list[CaptureEvent] = []
    for chunk in chunks(rng, data, rng.choice([1, 2, 5, 17])):
        events += capture.feed("stdout", chunk)
    events += capture.flush("stdout", final=True)
    assert events == expected


@pytest.mark.parametrize("seed", range(40))
def test_random_resume_points(seed: int) -> None:
    rng = random.Random(2000 + seed)
    delta_max = rng.choice([4, 6, 11, 64])
    data = random_output(rng, rng.randrange(1, 300))
    whole = OutputCapture(delta_max_bytes=delta_max)
    expected = deltas_of(feed_and_close(whole, data))

    first = OutputCapture(delta_max_bytes=delta_max)
    split = rng.randrange(0, len(data) + 1)
    events: list[Delta] = []
    for chunk in chunks(rng, data[:split], 7):
        events += deltas_of(first.feed("stdout", chunk))
    offset = first.offset("stdout")
    resumed = OutputCapture.resume(
        delta_max_bytes=delta_max,
        offsets={"stdout": offset},
        truncated=False,
        invalid_utf8={"stdout": first.invalid_utf8("stdout")},
    )
    for chunk in chunks(rng, data[offset:], 7):
        events += deltas_of(resumed.feed("stdout", chunk))
    events += resumed.flush("stdout", final=True)
    assert events == expected
    assert resumed.keep_artifact("stdout") == (not is_utf8(data))
