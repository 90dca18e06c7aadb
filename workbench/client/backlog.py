"""Input to an interactive execution, one piece per request: the rule of the Python client's
`send_input` and of the CLI's `send`, `run -i` and `attach`.

The daemon takes a piece (at most 1 MiB) whole or not at all: while the execution has not read
what was sent before (`input_backlog`: its supervisor keeps at most 1 MiB unread), none of the
piece was taken, and it is sent again, after a pause that doubles up to a quarter of a second,
until it is taken or the caller's bound passes. So a program that reads slowly gets every byte
once, in order; a sender that gives up says how many bytes were taken, so that a retry sends
the rest once.

Standard library only, and cheap to import: the CLI's start time depends on it.
"""

from __future__ import annotations

import time

#: The most bytes one input request carries (the daemon's limit).
MAX_INPUT_BYTES = 1 << 20
#: How long a piece refused with `input_backlog` waits before it is sent again (doubling).
PAUSE_S, PAUSE_MAX_S = 0.01, 0.25
#: How long a piece is sent again while the execution does not read, unless the caller says.
DEFAULT_TIMEOUT_S = 60.0


class Resend:
    """When one piece refused is sent again: for the error codes of `bounds`, for up to that many
    seconds since it was first refused with that code (None: for as long as it takes); never for
    another code."""

    def __init__(self, bounds: dict[str, float | None]) -> None:
        self.bounds = bounds
        self.pause = PAUSE_S
        self.since: dict[str, float] = {}

    def after(self, code: str) -> float | None:
        """The pause before sending the piece again once it was refused with `code`; None when
        it is not sent again (its bound passed, or `code` has none): the refusal stands."""
        if code not in self.bounds:
            return None
        bound = self.bounds[code]
        now = time.monotonic()
        first = self.since.setdefault(code, now)
        pause, self.pause = self.pause, min(self.pause * 2, PAUSE_MAX_S)
        if bound is None:
            return pause
        left = first + bound - now
        # The last try comes as the bound passes, not a pause after it.
        return None if left <= 0 else min(pause, left)


def pieces(data: str | bytes) -> list[bytes]:
    """`data` as bytes (text as UTF-8) in pieces of at most `MAX_INPUT_BYTES`, text cut between
    whole characters (so that each piece's journaled text is whole); one piece (perhaps empty)
    at least. Raises UnicodeEncodeError for text that is not Unicode (a lone surrogate)."""
    text = isinstance(data, str)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    out: list[bytes] = []
    at = 0
    while at < len(raw) or not out:
        end = min(at + MAX_INPUT_BYTES, len(raw))
        while text and end < len(raw) and raw[end] & 0xC0 == 0x80:  # inside a character
            end -= 1
        out.append(raw[at:end])
        at = end
    return out


def taken_said(taken: int, code: str, *, tail: bool = False) -> str:
    """What a sender that gave up says of its input (`taken` bytes of it were taken, then it was
    refused with `code`), so that a retry sends the rest once; `tail`: how `tail` cuts the rest."""
    if taken == 0:
        return "none of the input was taken: send it again later"
    how = f", as `tail -c +{taken + 1}` gives it" if tail else ""
    said = (
        f"the first {taken} bytes of the input were taken, the rest was not: send only the rest "
        f"again (from byte {taken + 1}{how})"
    )
    if code == "unavailable":  # the answer to the piece sent then may be what was lost
        said += "; the piece sent when the daemon went away may have been taken too"
    return said
