"""`workbench logs ID`: an execution's output, whole and byte for byte, or as lines.

Whole (no option but -f, --stdout, --stderr): every byte, from the artifacts where the journal
holds less. `--tail N` alone keeps the last N lines of each stream, still byte for byte (read from
the end of an artifact). `--since` and `-t` need each line's time, which only the journal's events
carry: they work on the journal's text, and say so when that is not every byte.
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import time

from workbench.cli.argtypes import parse_when, stamp
from workbench.cli.follow import TERMINAL, follow
from workbench.cli.http import Http
from workbench.cli.ids import resolve
from workbench.cli.output import STREAMS, Progress, write_recorded
from workbench.cli.signals import Interrupted, Signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

#: The first read from the end of an artifact for `--tail` (grown until it holds enough lines).
TAIL_CHUNK = 64 * 1024


def cmd_logs(http: Http, args: argparse.Namespace) -> int:
    streams = ("stdout",) if args.stdout else ("stderr",) if args.stderr else STREAMS
    since = stamp(parse_when(args.since, "--since")) if args.since is not None else None
    record = http.json("GET", f"/v1/executions/{resolve(http, args.id)}")
    terminal = record["status"] in TERMINAL
    if since is not None or args.timestamps or (args.tail is not None and args.follow and not terminal):
        return _as_lines(
            http, record, streams, since=since, tail=args.tail, stamps=args.timestamps, follow=args.follow
        )
    if args.tail is not None:
        for name in streams:
            _out(name).write(_exact_tail(http, record, name, args.tail))
            _out(name).flush()
    elif args.follow and not terminal:
        signals = Signals((signal.SIGINT,))
        signals.install()
        follow(http, record, signals=signals, react=_stop, label="following", streams=streams)
        return 0
    else:
        write_recorded(http, record, streams)
    if not terminal and record["output"]["truncated"]:
        print(
            f"workbench: {record['executionId']} is still running and passed the event budget: the rest "
            "of its output will be in its artifacts when it ends (or follow it with -f)",
            file=sys.stderr,
        )
    return 0


def _stop(sig: Interrupted, progress: Progress | None) -> None:
    raise KeyboardInterrupt  # logs -f cancels nothing: Ctrl-C only stops following


def _out(name: str) -> BinaryIO:
    return sys.stdout.buffer if name == "stdout" else sys.stderr.buffer


def last_lines(data: bytes, n: int) -> tuple[bytes, bool]:
    """The last `n` lines of `data` (a last line without a newline counts), and whether `data` held
    that many (else it is all of `data`)."""
    if n == 0:
        return b"", True
    pos = len(data) - 1 if data.endswith(b"\n") else len(data)
    for _ in range(n):
        pos = data.rfind(b"\n", 0, pos)
        if pos < 0:
            return data, False
    return data[pos + 1 :], True


def _exact_tail(http: Http, record: dict[str, Any], name: str, n: int) -> bytes:
    execution_id = record["executionId"]
    artifact = next((a for a in record["artifacts"] if a["name"] == name), None)
    if artifact is None:
        text = "".join(e["outputDelta"] or "" for e in _events(http, execution_id, name))
        return last_lines(text.encode(), n)[0]
    size, chunk = artifact["sizeBytes"], TAIL_CHUNK
    while True:
        start = max(0, size - chunk)
        sink = _Bytes()
        http.download(f"/v1/executions/{execution_id}/artifacts/{name}", sink, start, size)
        tail, whole = last_lines(bytes(sink.data), n)
        if whole or start == 0:
            return tail
        chunk *= 4


class _Bytes:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)


def _events(http: Http, execution_id: str, stream: str | None = None) -> Iterator[dict[str, Any]]:
    """The journal's output events (of `stream`, or both), page by page."""
    after = 0
    while True:
        page = http.json(
            "GET", f"/v1/executions/{execution_id}/events", query={"after": after, "limit": 10000}
        )
        for event in page["events"]:
            if event["eventType"] == "output" and (stream is None or event["stream"] == stream):
                yield event
            after = event["sequence"]
        if page["terminal"] or not page["events"]:
            return


class Lines:
    """One stream's text as lines, each kept or not by the time of the event where it began
    (`since`), begun with that time (`stamps`); the last `tail` of them held back until `flush`."""

    def __init__(self, out: BinaryIO, *, since: str | None, stamps: bool, tail: int | None) -> None:
        self.out, self.since, self.stamps = out, since, stamps
        self.held: collections.deque[str] | None = (
            collections.deque(maxlen=tail) if tail is not None else None
        )
        self.line, self.begun, self.keep = "", False, True

    def feed(self, text: str, stamp: str) -> None:
        for i, part in enumerate(text.split("\n")):
            if i:
                self._begin(stamp)
                self.line += "\n"
                self._end_line()
            if part:
                self._begin(stamp)
                self.line += part
                if self.held is None:  # following: what came of the line is shown at once
                    self._write(self.line)
                    self.line = ""
        if self.held is None:
            self.out.flush()

    def _begin(self, stamp: str) -> None:
        if not self.begun:
            self.begun = True
            self.keep = self.since is None or stamp >= self.since
            if self.stamps:
                self.line = f"{stamp} {self.line}"

    def _end_line(self) -> None:
        if self.held is not None:
            if self.keep:
                self.held.append(self.line)
        else:
            self._write(self.line)
        self.line, self.begun = "", False

    def _write(self, text: str) -> None:
        if self.keep and text:
            self.out.write(text.encode())

    def flush(self) -> None:
        """Write the lines held back (and the line begun), then write lines as they come."""
        held, self.held = self.held, None
        for line in held or ():
            self._write(line)
        self._write(self.line)
        self.line = ""
        self.out.flush()


def _as_lines(
    http: Http,
    record: dict[str, Any],
    streams: tuple[str, ...],
    *,
    since: str | None,
    tail: int | None,
    stamps: bool,
    follow: bool,
) -> int:
    execution_id = record["executionId"]
    if record["artifacts"] or record["output"]["truncated"]:
        print(
            f"workbench: warning: {execution_id}'s output is not all in its journal (past the event "
            "budget, or not UTF-8): these are the journal's lines; `workbench logs "
            f"{execution_id}` writes every byte",
            file=sys.stderr,
        )
    lines = {name: Lines(_out(name), since=since, stamps=stamps, tail=tail) for name in streams}
    last = 0
    for event in _events(http, execution_id):
        last = event["sequence"]
        if event["stream"] in lines:
            lines[event["stream"]].feed(event["outputDelta"] or "", event["timestamp"])
    for one in lines.values():
        one.flush()
    if not follow or record["status"] in TERMINAL:
        return 0
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for kind, data in http.stream(execution_id, last):
        if kind in ("event", "live") and data.get("eventType") == "output" and data.get("stream") in lines:
            # Display updates may have no time of their own: they are written now.
            when = data.get("timestamp") or stamp(int(time.time() * 1000))
            lines[data["stream"]].feed(data.get("outputDelta") or "", when)
        elif kind == "gap":
            print(
                f"workbench: warning: missed {data.get('missedBytes')} bytes of live output", file=sys.stderr
            )
    return 0
