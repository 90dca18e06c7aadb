"""Writing an execution's output to our own stdout and stderr: live, and byte-exact in the end.

Events carry decoded text. While a stream's text is exact (journal deltas, and display updates
past the budget), it is written as it comes. A U+FFFD in it (a byte that was not UTF-8, or a
character the process really wrote: the journal cannot tell), a `gap`, or a reconnect past the
budget (the display in between is lost) make that stream's live text inexact: it stops there,
and `finish()` writes the rest from the artifact with a Range request from the byte offset
already written. A stream with no artifact wrote only valid UTF-8 within the budget, so the text
held back from the journal is exact. Display text is checked against the artifact at the end;
should it differ, a warning says so rather than writing a wrong tail.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from workbench.cli.http import Http
from workbench.cli.signals import NO_SIGNALS, Signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

STREAMS = ("stdout", "stderr")
#: A wait shorter than this shows no progress line at all.
PROGRESS_AFTER_S = 1.0
PROGRESS_EVERY_S = 0.2


class Progress:
    """A one-line status on stderr (elapsed time, and DONE/TOTAL as a bar) while waiting on a terminal.

    Shown only when stdout and stderr are both terminals and the wait passed `PROGRESS_AFTER_S`;
    it is erased before any output is written, and drawn only at the start of a line.
    """

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.enabled = sys.stdout.isatty() and sys.stderr.isatty() if enabled is None else enabled
        self.label = label
        self.at_line_start = True
        self._shown = False
        self._started = time.monotonic()
        self._done: float | None = None
        self._total: float | None = None
        self._message = ""
        if self.enabled:
            import threading  # only here: most runs are not on a terminal

            self.lock = threading.Lock()
            self._stop = threading.Event()
            threading.Thread(target=self._run, name="progress", daemon=True).start()

    def update(self, done: float | None, total: float | None, message: str | None) -> None:
        self._done, self._total, self._message = done, total, message or ""

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_EVERY_S):
            if time.monotonic() - self._started >= PROGRESS_AFTER_S:
                with self.lock:
                    if self.at_line_start and not self._stop.is_set():
                        self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self._started
        text = f"{self.label} {format_seconds(elapsed)}"
        if self._done is not None and self._total:
            share = max(0.0, min(1.0, self._done / self._total))
            bar = "#" * round(share * 20)
            text += f" [{bar:<20}] {self._done:g}/{self._total:g}"
        if self._message:
            text += f" {self._message}"
        import shutil

        # A line longer than the terminal would wrap, and "\r" could no longer erase it.
        sys.stderr.write("\r\x1b[K" + text[: max(10, shutil.get_terminal_size().columns - 1)])
        sys.stderr.flush()
        self._shown = True

    def say(self, line: str) -> None:
        """Write a line of ours on stderr, the progress line erased first (drawn again later)."""
        try:
            if not self.enabled:
                print(line, file=sys.stderr, flush=True)
                return
            with self.lock:
                self.clear()
                prefix = "" if self.at_line_start else "\n"
                sys.stderr.write(f"{prefix}{line}\n")
                sys.stderr.flush()
                self.at_line_start = True
        except OSError:  # stderr is gone (a closed terminal)
            pass

    def clear(self) -> None:
        """Erase the line (call with `lock` held)."""
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = False

    def stop(self) -> None:
        if self.enabled:
            self._stop.set()
            with self.lock:
                self.clear()


def format_seconds(seconds: float) -> str:
    """`850ms`, `12.3s`, `4m05s`, `2h03m`."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class _Tail:
    """Our stdout's bytes pass through here: whether the last of them ended a line (a code
    context's value is printed on a line of its own)."""

    def __init__(self) -> None:
        self.at_line_start = True

    def write(self, data: bytes, /) -> int:
        if data:
            self.at_line_start = data.endswith(b"\n")
        return sys.stdout.buffer.write(data)

    def flush(self) -> None:
        sys.stdout.buffer.flush()


#: What the output of executions written to our stdout goes through.
STDOUT = _Tail()


class _Stream:
    def __init__(self, out: BinaryIO | _Tail) -> None:
        self.out = out
        #: Bytes of this stream written so far.
        self.printed = 0
        #: Still written as events come.
        self.live = True
        #: Journal text not written live (after a U+FFFD), written at the end when there is no artifact.
        self.held: list[str] = []
        #: Written from the artifact alone (an ended execution that has one): events are ignored.
        self.artifact_only = False
        #: Where display text (past the budget) began, and its hash, to check it against the artifact.
        self.display_from: int | None = None
        self.display_hash: Any = None


class Output:
    """The output of one execution, written to this process's stdout and stderr.

    Args:
        streams: which streams to write (the others are ignored).
        trust_display: False when the budget was already spent before following began: the
            display text a new follower gets does not continue the journal, so it is not written.
        progress: the progress line to erase around writes, if any.
        signals: holds signals back while a write and its accounting happen.
    """

    def __init__(
        self,
        streams: tuple[str, ...] = STREAMS,
        *,
        trust_display: bool = True,
        progress: Progress | None = None,
        signals: Signals = NO_SIGNALS,
    ) -> None:
        files = {"stdout": STDOUT, "stderr": sys.stderr.buffer}
        self.streams = {name: _Stream(files[name]) for name in streams}
        self.trust_display = trust_display
        self.truncated = False
        self.progress = progress
        self.signals = signals

    def _write(self, state: _Stream, data: bytes) -> None:
        if not data:
            return
        progress = self.progress
        if progress is None:
            state.out.write(data)
            state.out.flush()
        else:
            with progress.lock:
                progress.clear()
                state.out.write(data)
                state.out.flush()
                progress.at_line_start = data.endswith(b"\n")
        state.printed += len(data)

    def stop(self, name: str | None = None) -> None:
        """Stop writing `name` (all streams when None) live; `finish()` writes the rest."""
        for key, state in self.streams.items():
            if name is None or key == name:
                state.live = False

    def from_artifact(self, name: str) -> None:
        """Write `name` only from its artifact, at `finish()` (for an execution that has ended)."""
        state = self.streams.get(name)
        if state is not None:
            state.live, state.held, state.artifact_only = False, [], True

    def event(self, event: dict[str, Any]) -> None:
        """Take one journal event."""
        kind = event["eventType"]
        if kind == "output":
            state = self.streams.get(event["stream"])
            if state is None or state.artifact_only:
                return
            text: str = event["outputDelta"] or ""
            with self.signals.deferred():
                if state.live:
                    cut = text.find("\ufffd")
                    if cut < 0:
                        self._write(state, text.encode())
                        return
                    self._write(state, text[:cut].encode())
                    state.live, text = False, text[cut:]
                state.held.append(text)
        elif kind == "output_truncated":
            self.truncated = True
            if not self.trust_display:
                self.stop()
        elif kind == "progress" and self.progress is not None:
            self.progress.update(event.get("progress"), event.get("total"), event.get("message"))

    def live(self, event: dict[str, Any]) -> None:
        """Take one display update (past the budget; not journaled)."""
        state = self.streams.get(event.get("stream") or "")
        if state is None or not state.live:
            return
        if not self.trust_display:
            state.live = False
            return
        text: str = event.get("outputDelta") or ""
        cut = text.find("\ufffd")
        data = (text if cut < 0 else text[:cut]).encode()
        with self.signals.deferred():
            if state.display_from is None:
                import hashlib

                state.display_from, state.display_hash = state.printed, hashlib.sha256()
            self._write(state, data)
            state.display_hash.update(data)
            if cut >= 0:
                state.live = False

    def reconnected(self) -> None:
        """A new connection replaced a broken one: display output in between was lost."""
        if self.truncated:
            self.stop()

    def needs_finish(self) -> bool:
        return any(not s.live or s.display_from is not None for s in self.streams.values())

    def finish(self, http: Http, execution_id: str, record: dict[str, Any] | None = None) -> list[str]:
        """Write what live text could not: from the artifacts, or the held journal text.

        Returns warnings (display text that did not match the artifact). `record` is fetched
        when not given and needed.
        """
        warnings: list[str] = []
        if not self.needs_finish():
            return warnings
        if record is None:
            record = http.json("GET", f"/v1/executions/{execution_id}")
        artifacts = {a["name"]: a for a in record.get("artifacts", [])}
        for name, state in self.streams.items():
            artifact = artifacts.get(name)
            if artifact is None:
                for text in state.held:
                    self._write(state, text.encode())
                state.held = []
                continue
            path = f"/v1/executions/{execution_id}/artifacts/{name}"
            if state.display_from is not None and state.printed > state.display_from:
                check = _Hasher()
                http.download(path, check, state.display_from, state.printed)
                if check.hash.digest() != state.display_hash.digest():
                    warnings.append(
                        f"the live {name} past the event budget missed some bytes; the whole {name} is in "
                        f"its artifact (workbench logs {execution_id})"
                    )
                    continue
            if state.printed < artifact["sizeBytes"]:
                with self._guard_progress():
                    state.printed += http.download(path, state.out, state.printed)
                    state.out.flush()
        return warnings

    @contextmanager
    def _guard_progress(self) -> Iterator[None]:
        if self.progress is None:
            yield
            return
        with self.progress.lock:
            self.progress.clear()
            yield
            self.progress.at_line_start = True


class _Hasher:
    def __init__(self) -> None:
        import hashlib

        self.hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return len(data)


def write_recorded(http: Http, record: dict[str, Any], streams: tuple[str, ...] = STREAMS) -> None:
    """Write what an execution's record says it has written so far, byte for byte where it ended:
    from its artifacts, else from the journal (no request at all when it wrote nothing)."""
    output = Output(streams)
    terminal = record["status"] in ("completed", "failed", "cancelled", "timed_out")
    artifacts = {a["name"] for a in record["artifacts"]}
    sizes = record["output"]
    need_events = False
    for name in streams:
        if name in artifacts:
            output.from_artifact(name)
        elif sizes.get(f"{name}Bytes", 0) > 0:
            need_events = True
    after = 0
    path = f"/v1/executions/{record['executionId']}/events"
    while need_events:
        page = http.json("GET", path, query={"after": after, "limit": 10000})
        for event in page["events"]:
            output.event(event)
        if page["terminal"] or page["nextAfter"] == after:
            break
        after = page["nextAfter"]
    # A running execution has no artifacts yet: what the journal holds is all there is to show.
    output.finish(http, record["executionId"], record if terminal else {"artifacts": []})
