"""The benchmarks' own SSE parser: the same events however the stream is cut."""

from __future__ import annotations

import json

from bench.wire import SseEvent, SseParser

FRAMES = (
    b": keepalive\n\n"
    b"id: 1\nevent: status\ndata: " + json.dumps({"status": "running"}).encode() + b"\n\n"
    b"id: 2\nevent: output\ndata: " + json.dumps({"outputDelta": "x\n" * 300}).encode() + b"\n\n"
    b'event: gap\ndata: {"missedBytes": 5}\n\n'
    b"id: 3\nevent: output\ndata: first\ndata: second\n\n"
)

EXPECTED = [
    SseEvent("status", 1, json.dumps({"status": "running"})),
    SseEvent("output", 2, json.dumps({"outputDelta": "x\n" * 300})),
    SseEvent("gap", None, '{"missedBytes": 5}'),
    SseEvent("output", 3, "first\nsecond"),
]


def test_the_whole_stream_at_once() -> None:
    assert SseParser().feed(FRAMES) == EXPECTED


def test_cut_in_two_at_every_place() -> None:
    for cut in range(len(FRAMES) + 1):
        parser = SseParser()
        assert parser.feed(FRAMES[:cut]) + parser.feed(FRAMES[cut:]) == EXPECTED, cut


def test_one_byte_at_a_time() -> None:
    parser = SseParser()
    events = []
    for i in range(len(FRAMES)):
        events += parser.feed(FRAMES[i : i + 1])
    assert events == EXPECTED


def test_an_unfinished_event_waits_for_its_end() -> None:
    parser = SseParser()
    assert parser.feed(b"id: 7\nevent: output\ndata: abc\n") == []
    assert parser.feed(b"\n") == [SseEvent("output", 7, "abc")]
