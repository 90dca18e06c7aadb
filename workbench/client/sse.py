"""A sans-IO reader of `text/event-stream`: feed it lines, get frames. Standard library only.

Shared by the Python client (lines from httpx) and the CLI (lines from `http.client`), so both
read the daemon's stream the same way: `id:` is the event's sequence, an id-less `output` frame
is a live display update past the output budget, `event: gap` says how many display bytes a slow
reader missed, and `:` comments (keepalives) are dropped.
"""

from __future__ import annotations


class Frame:
    """One server-sent event."""

    __slots__ = ("data", "event", "id")

    def __init__(self, id: int | None, event: str, data: str) -> None:
        #: The `id:` field as a sequence number, or None for a display update or a gap.
        self.id = id
        #: The `event:` field (`message` when absent).
        self.event = event
        #: The `data:` field (its lines joined with newlines).
        self.data = data

    def __repr__(self) -> str:
        return f"Frame(id={self.id!r}, event={self.event!r}, data={self.data[:60]!r})"


class FrameReader:
    """Accumulates the fields of the frame being read; `line()` returns a frame when one ends."""

    def __init__(self) -> None:
        self._id: str | None = None
        self._event: str | None = None
        self._data: list[str] = []
        self._any = False

    def line(self, line: str) -> Frame | None:
        """Take one line (without its line ending); the completed frame at a blank line, else None."""
        if not line:
            if not self._any:
                return None
            raw_id = self._id
            frame = Frame(
                int(raw_id) if raw_id is not None and raw_id.isdigit() else None,
                self._event or "message",
                "\n".join(self._data),
            )
            self._id, self._event, self._data, self._any = None, None, [], False
            return frame
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        elif name == "event":
            self._event = value
        else:
            return None  # `retry:` and unknown fields are not used by Workbench
        self._any = True
        return None
