"""Output as a terminal would show it to a person: the `plain` preview format (sans-IO).

Progress bars of pip, npm and test runners redraw one line many times with `\\r` (and erase it
with `ESC [ K`); coloured output wraps words in ANSI escapes. A model reading the raw bytes pays
for every redraw and every escape. `plain()` keeps what the screen would show at the end: each
line in the last state its redraws left, without escapes or other control characters. Only the
line-local part of a terminal is modelled (carriage return, backspace, erase in line, tabs kept
as they are); cursor moves between lines are dropped, as a log of the output cannot replay them.
"""

from __future__ import annotations

import re
from typing import Final

# CSI (`ESC [` ... final byte), OSC (`ESC ]` ... BEL or ST), DCS/SOS/PM/APC (`ESC P` ... ST), and
# the two-byte escapes; a lone ESC cut off at the end of the text goes too.
_ESCAPE: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b$"
)
#: Control characters a screen does not show (tab, newline, CR and backspace are handled apart).
_CONTROL: Final = re.compile(r"[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
#: What moves or erases within a line, and runs of text between them.
_TOKEN: Final = re.compile(r"\r|\x08|\x1b\[([0-9;]*)K|\x1b\[[0-?]*[ -/]*[@-~]|[^\r\x08\x1b]+|\x1b")
_NEEDS_LINE_MODEL: Final = re.compile(r"[\r\x08]|\x1b\[[0-9;]*K")


def plain(text: str) -> str:
    """`text` with ANSI escapes and unseen control characters removed, and each line in the
    state its `\\r` and backspace redraws left it in (`ESC [ K` erasing as a terminal does).

    Never longer than `text`, in characters or in UTF-8 bytes.
    """
    lines = text.split("\n")
    out = []
    for line in lines:
        if _NEEDS_LINE_MODEL.search(line):
            line = _redraw(line)
        if "\x1b" in line:
            line = _ESCAPE.sub("", line)
        out.append(_CONTROL.sub("", line))
    return "\n".join(out)


def _redraw(line: str) -> str:
    """The last state of one line written with carriage returns, backspaces and erases."""
    shown = ""
    cursor = 0
    for match in _TOKEN.finditer(line):
        token = match.group()
        if token == "\r":
            cursor = 0
        elif token == "\x08":
            cursor = max(0, cursor - 1)
        elif match.group(1) is not None:  # ESC [ n K: erase in line
            mode = match.group(1) or "0"
            if mode == "0":
                shown = shown[:cursor]
            elif mode == "1":
                shown = " " * min(cursor + 1, len(shown)) + shown[cursor + 1 :]
            else:
                shown = ""
        elif token.startswith("\x1b"):
            continue  # another escape: nothing to show
        else:
            token = _CONTROL.sub("", token)
            if len(shown) < cursor:
                shown = shown.ljust(cursor)
            shown = shown[:cursor] + token + shown[cursor + len(token) :]
            cursor += len(token)
    return shown
