"""OutputCapture with plain bytes: the event budget, resume, and properties over random output."""

from __future__ import annotations

import random

import pytest

from tests.core.test_output import (
    BUDGET,
    CHARS,
    M,
    check_deltas,
    deltas_of,
    enc,
    feed_and_close,
    is_utf8,
    text_of,
)
from workbench.core.output import STREAMS, CaptureEvent, Delta, OutputCapture, OutputTruncated, Stream

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
