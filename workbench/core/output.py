"""Output capture: what an execution's stdout and stderr bytes become in the journal (sans-IO).

The daemon follows an execution's two spool files and feeds every new chunk of bytes, in the
order read, to an `OutputCapture`. The capture turns them into `Delta`s (the `output` events)
and, once, an `OutputTruncated` marker (the `output_truncated` event), and says which spool
files must be kept as artifacts. It does no I/O and keeps no clock: the caller decides when a
quiet stream is flushed.

Text is what `bytes.decode("utf-8", "replace")` makes of a stream's bytes: for the bytes
journaled, the concatenated texts of a stream's deltas are exactly that decoding of the spool
file's bytes up to the last delta's `end_offset`, and every delta is itself exactly the decoding
of the bytes it covers (a delta never splits a character, nor one U+FFFD's run of bad bytes).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Stream: TypeAlias = Literal["stdout", "stderr"]
STREAMS: Final[tuple[Stream, ...]] = ("stdout", "stderr")

DEFAULT_DELTA_MAX_BYTES: Final = 65536
DEFAULT_BUDGET_BYTES: Final = 5242880
# The longest UTF-8 character is 4 bytes; a smaller limit could not always make progress.
MIN_DELTA_MAX_BYTES: Final = 4

_REPLACEMENT: Final = "\ufffd"
_REPLACEMENT_BYTES: Final = 3


@dataclass(frozen=True, slots=True)
class Delta:
    """A piece of one stream's output, ready to be journaled as an `output` event.

    `text` is at most `delta_max_bytes` bytes when encoded as UTF-8 and is never empty.
    `raw_bytes` (> 0) is how many of the process's own bytes it covers: that differs from the
    encoded size of `text` only where invalid bytes became U+FFFD. `end_offset` is the offset
    in the stream's spool file reached once this delta is journaled; store it, and a restarted
    daemon resumes exactly after it (see `OutputCapture.resume`).
    """

    stream: Stream
    text: str
    raw_bytes: int
    end_offset: int

    @property
    def start_offset(self) -> int:
        """The offset in the spool file of the first byte this delta covers."""
        return self.end_offset - self.raw_bytes


@dataclass(frozen=True, slots=True)
class OutputTruncated:
    """The output budget is spent: nothing more of either stream becomes an event.

    `streams` names the streams whose bytes were cut off at this moment (the one whose write
    crossed the budget, and the other one if an incomplete character of it was dropped);
    either stream may still write more afterwards. `event_bytes` is how many raw bytes the
    deltas covered in all, at most `budget_bytes`. Which artifacts are kept is decided at the
    end by `OutputCapture.keep_artifact`.
    """

    streams: tuple[Stream, ...]
    event_bytes: int
    budget_bytes: int


CaptureEvent: TypeAlias = Delta | OutputTruncated


class _StreamState:
    """What one stream has been fed but not yet turned into deltas, and its counters."""

    __slots__ = ("analysed", "buf", "invalid", "offset", "pending_enc", "total")

    def __init__(self, offset: int, invalid: bool) -> None:
        # buf holds the raw bytes after `offset` that no delta covers yet. Its first `analysed`
        # bytes are whole decoded units (characters, or runs of bad bytes that each become one
        # U+FFFD) whose text is `pending_enc` bytes long in UTF-8; the rest (at most 3 bytes) is
        # the start of a character that the next bytes may complete.
        self.buf = bytearray()
        self.analysed = 0
        self.pending_enc = 0
        self.offset = offset
        self.total = offset
        self.invalid = invalid


class OutputCapture:
    """Cuts an execution's output into journal deltas and counts its event budget.

    `feed` takes each new chunk read from a stream's spool file and returns what is ready to be
    journaled: a delta as soon as a full `delta_max_bytes` of text is pending for that stream;
    smaller remainders wait for `flush` (call it after a short quiet spell, and with
    `final=True` at the stream's EOF). A character split across chunks waits for the rest.

    The budget counts the process's raw bytes, stdout and stderr together: every byte up to
    exactly `budget_bytes` goes into deltas (except a character that the budget cuts in two,
    which is left out whole). The feed that crosses the budget returns the last deltas of both
    streams and then one `OutputTruncated`; after it, `feed` and `flush` return nothing and
    only count bytes, in O(1) per call.

    Bytes past the budget are never scanned, so per-stream invalid-UTF-8 detection covers the
    bytes within it; that suffices because a truncated capture keeps both spool files anyway.
    """

    def __init__(
        self, *, delta_max_bytes: int = DEFAULT_DELTA_MAX_BYTES, budget_bytes: int = DEFAULT_BUDGET_BYTES
    ) -> None:
        """A capture of an execution whose output starts at offset 0 of both spool files.

        Raises ValueError unless `delta_max_bytes >= 4` and `budget_bytes >= 0`.
        """
        if delta_max_bytes < MIN_DELTA_MAX_BYTES:
            raise ValueError(f"delta_max_bytes must be at least {MIN_DELTA_MAX_BYTES}, not {delta_max_bytes}")
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must not be negative, not {budget_bytes}")
        self._delta_max = delta_max_bytes
        self._budget = budget_bytes
        self._states: dict[Stream, _StreamState] = {name: _StreamState(0, False) for name in STREAMS}
        self._used = 0  # raw bytes taken within the budget, pending ones included
        self._event_bytes = 0
        self._truncated = False

    @classmethod
    def resume(
        cls,
        *,
        delta_max_bytes: int = DEFAULT_DELTA_MAX_BYTES,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        offsets: Mapping[Stream, int],
        truncated: bool,
        invalid_utf8: Mapping[Stream, bool] | None = None,
    ) -> OutputCapture:
        """A capture that continues one whose journaled state was this, after a restart.

        `offsets` are the `end_offset`s of the last journaled delta of each stream (a stream
        missing from it is at 0), `truncated` whether the `OutputTruncated` marker was
        journaled, and `invalid_utf8` the `invalid_utf8(stream)` values read after the
        feeds/flushes whose results were journaled (reading them later is fine: they only turn
        true, and the bytes that turned them are in the spool file for good). Feed it each spool
        file's bytes from its offset on: deltas, `total_bytes` and `event_bytes` (the sum of the
        offsets) continue as if the capture had never stopped. Bytes that were pending and
        never journaled, an incomplete character among them, are simply read again. Given the
        same bytes and no flush in between, the deltas are the same as without the restart.

        If the offsets add up to more than `budget_bytes` (the setting shrank in between), the
        next byte fed truncates. Raises ValueError for negative offsets or unknown streams.
        """
        unknown = set(offsets) - set(STREAMS)
        if invalid_utf8 is not None:
            unknown |= set(invalid_utf8) - set(STREAMS)
        if unknown:
            raise ValueError(f"unknown streams: {sorted(unknown)}")
        if any(offset < 0 for offset in offsets.values()):
            raise ValueError(f"offsets must not be negative: {dict(offsets)}")
        capture = cls(delta_max_bytes=delta_max_bytes, budget_bytes=budget_bytes)
        invalid = invalid_utf8 or {}
        capture._states = {
            name: _StreamState(offsets.get(name, 0), invalid.get(name, False)) for name in STREAMS
        }
        capture._event_bytes = capture._used = sum(offsets.values())
        capture._truncated = truncated
        return capture

    @property
    def delta_max_bytes(self) -> int:
        """The most UTF-8 bytes of text one delta holds."""
        return self._delta_max

    @property
    def budget_bytes(self) -> int:
        """The most raw bytes, both streams together, that go into deltas."""
        return self._budget

    @property
    def truncated(self) -> bool:
        """Whether the budget was crossed (the `OutputTruncated` marker has been returned)."""
        return self._truncated

    @property
    def event_bytes(self) -> int:
        """Raw bytes covered by the deltas returned so far, both streams together."""
        return self._event_bytes

    def total_bytes(self, stream: Stream) -> int:
        """Raw bytes of `stream` fed so far (those before the resume offset included)."""
        return self._state(stream).total

    def offset(self, stream: Stream) -> int:
        """The `end_offset` of the last delta of `stream` (where a resume would start)."""
        return self._state(stream).offset

    def pending_bytes(self, stream: Stream) -> int:
        """Raw bytes of `stream` fed within the budget that no delta covers yet.

        Zero means a `flush` of that stream has nothing to do. Bytes that only start a
        character are included: a non-final flush leaves them pending.
        """
        return len(self._state(stream).buf)

    def invalid_utf8(self, stream: Stream) -> bool:
        """Whether `stream` held a byte that is not valid UTF-8 (within the budget) so far.

        A character left incomplete at EOF counts, once `flush(stream, final=True)` saw it.
        """
        return self._state(stream).invalid

    def keep_artifact(self, stream: Stream) -> bool:
        """Whether the spool file of `stream` must be kept as an artifact when the run ends.

        True when the stream has at least one byte and either the output was truncated (then
        both streams are kept, so that together they hold the whole output) or this stream
        held invalid UTF-8. A stream that wrote nothing is never kept: no artifact means empty.
        Ask after the final flush of both streams.
        """
        state = self._state(stream)
        return state.total > 0 and (self._truncated or state.invalid)

    def feed(self, stream: Stream, data: bytes | bytearray | memoryview) -> list[CaptureEvent]:
        """Take the next bytes read from `stream` and return what is ready to be journaled.

        Returns the deltas of every full `delta_max_bytes` of text now pending for `stream`
        (none if less is pending). The call that crosses the budget returns, after those, the
        deltas of whatever else the budget admitted on both streams, then `OutputTruncated`;
        that is the last thing either stream ever returns. Raises ValueError for an unknown
        stream.
        """
        state = self._state(stream)
        size = data.nbytes if isinstance(data, memoryview) else len(data)
        state.total += size
        if self._truncated or size == 0:
            return []
        room = self._budget - self._used
        if size <= room:
            self._used += size
            state.buf += data
            self._analyse(state, final=False)
            return list(self._drain(stream, state, final=False, everything=False))

        taken = max(room, 0)
        if taken:
            self._used += taken
            with memoryview(data) as view, view.cast("B") as octets, octets[:taken] as head:
                state.buf += head
            self._analyse(state, final=False)
        events: list[CaptureEvent] = list(self._drain(stream, state, final=False, everything=False))
        cut: list[Stream] = []
        for name in STREAMS:
            other = self._states[name]
            events.extend(self._drain(name, other, final=False, everything=True))
            # What is left is the start of a character whose end lies past the budget: it is
            # left out whole, and its bytes are in the artifact.
            if other.buf or name == stream:
                cut.append(name)
            other.buf = bytearray()
            other.analysed = other.pending_enc = 0
        self._truncated = True
        events.append(
            OutputTruncated(streams=tuple(cut), event_bytes=self._event_bytes, budget_bytes=self._budget)
        )
        return events

    def flush(self, stream: Stream, *, final: bool = False) -> list[Delta]:
        """Return the text pending for `stream` as deltas (usually one, or none).

        A character still incomplete stays pending unless `final` is true (the stream reached
        EOF): then it becomes U+FFFD and the stream counts as invalid UTF-8. After truncation
        this returns nothing. Raises ValueError for an unknown stream.
        """
        state = self._state(stream)
        if self._truncated:
            return []
        if final and state.analysed < len(state.buf):
            self._analyse(state, final=True)
        return self._drain(stream, state, final=final, everything=True)

    def flush_all(self, *, final: bool = False) -> list[Delta]:
        """`flush` stdout, then stderr."""
        return [delta for name in STREAMS for delta in self.flush(name, final=final)]

    def _state(self, stream: Stream) -> _StreamState:
        state = self._states.get(stream)
        if state is None:
            raise ValueError(f"unknown stream {stream!r}; expected one of {STREAMS}")
        return state

    def _analyse(self, state: _StreamState, *, final: bool) -> None:
        # Decode new bytes on arrival only to learn how long their text is (and whether they are
        # valid); the text is made again when a delta is cut, so pending output is held once,
        # as raw bytes, and a cut knows exactly which bytes it covers.
        _, end, enc, valid = _decode(state.buf, state.analysed, len(state.buf), final=final)
        state.analysed = end
        state.pending_enc += enc
        if not valid:
            state.invalid = True

    def _drain(self, stream: Stream, state: _StreamState, *, final: bool, everything: bool) -> list[Delta]:
        deltas: list[Delta] = []
        threshold = 1 if everything else self._delta_max
        while state.pending_enc >= threshold:
            text, raw, enc = self._cut(state, final=final)
            if raw == 0:  # cannot happen with delta_max >= 4; never spin if it somehow does
                raise RuntimeError("output capture made no progress")
            del state.buf[:raw]  # O(1): CPython moves a bytearray's start instead of copying
            state.analysed -= raw
            state.pending_enc -= enc
            state.offset += raw
            self._event_bytes += raw
            deltas.append(Delta(stream=stream, text=text, raw_bytes=raw, end_offset=state.offset))
        return deltas

    def _cut(self, state: _StreamState, *, final: bool) -> tuple[str, int, int]:
        """The longest run of whole analysed units from the start whose text fits in a delta.

        Returns (text, raw bytes covered, encoded size of text).
        """
        limit = self._delta_max
        # Text is never shorter than its raw bytes, so the delta's bytes lie within the first
        # delta_max_bytes; for valid UTF-8 (the usual case) they are exactly its whole characters.
        end = min(state.analysed, limit)
        text, raw, enc, _ = _decode(state.buf, 0, end, final=final)
        if enc <= limit:
            return text, raw, enc
        # Invalid bytes became U+FFFD, 3 bytes of text for 1 to 3 raw ones: bisect for the cut,
        # decoding only from the last accepted cut, so each step decodes at most the half left.
        parts: list[str] = []
        done = done_enc = 0
        lo, hi = 0, end  # the units within buf[:lo] fit in a delta; those within buf[:hi] do not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            text, raw, enc, _ = _decode(state.buf, done, mid, final=final)
            if done_enc + enc <= limit:
                parts.append(text)
                done, done_enc, lo = raw, done_enc + enc, mid
            else:
                hi = mid
        return "".join(parts), done, done_enc


def _decode(buf: bytearray, start: int, end: int, *, final: bool) -> tuple[str, int, int, bool]:
    """Decode the whole units of `buf[start:end]`; `start` must be a unit boundary.

    Returns (text, index in buf where the decoded units end, encoded size of text, whether
    those bytes were valid UTF-8). Bytes that may start a character completed only by later
    bytes are left undecoded, unless `final` and `end` is the end of `buf`. A unit is either a
    whole character or a maximal run of bad bytes that "replace" turns into one U+FFFD, so
    decoding from one unit boundary to the next gives exactly the text of decoding it all.
    """
    final = final and end == len(buf)
    with memoryview(buf) as view, view[start:end] as chunk:
        try:
            text, count = codecs.utf_8_decode(chunk, "strict", final)
            enc, valid = count, True
        except UnicodeDecodeError:
            text, count = codecs.utf_8_decode(chunk, "replace", final)
            enc, valid = len(text.encode("utf-8")), False
        stop = start + count
        held = end - stop
        if held == 2 and buf[stop] == 0xED and 0xA0 <= buf[stop + 1] <= 0xBF:
            # CPython holds back a truncated UTF-16 surrogate (b"\xed\xa0") although no byte
            # can make it valid: it is two bad units whatever follows.
            text += _REPLACEMENT * 2
            enc += _REPLACEMENT_BYTES * 2
            stop, valid = end, False
        elif held and end < len(buf) and _ends_unit(view[stop : end + 1]):
            # A held-back start such as b"\xe2\x82" is a unit of its own when the byte after it
            # cannot continue it; that byte may lie past `end`, so ask it, or this unit boundary
            # would be unreachable and a cut could stall or come up short.
            text += _REPLACEMENT
            enc += _REPLACEMENT_BYTES
            stop, valid = end, False
    return text, stop, enc, valid


def _ends_unit(sequence: memoryview) -> bool:
    """Whether the last byte of `sequence` cannot continue the incomplete character before it."""
    try:
        # final=True: a byte that continues the character but does not complete it makes the
        # error span past it, while a byte that cannot continue it ends the error before it.
        codecs.utf_8_decode(sequence, "strict", True)
    except UnicodeDecodeError as error:
        return error.start == 0 and error.end == len(sequence) - 1
    finally:
        sequence.release()
    return False
