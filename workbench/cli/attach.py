"""`workbench run -i/-t` and `workbench attach`: a terminal (or stdin) joined to an interactive execution.

The output follows the execution's event stream (from its first event: `attach` replays what the
terminal showed, from the journal, then goes live); a thread reads our stdin and sends it as
input. With a terminal of our own and `-t`, ours is in raw mode: every key goes to the program as
typed (Ctrl-C included: the execution's terminal makes it a SIGINT for its foreground job), our
window size is kept (SIGWINCH → a resize), and Ctrl-P Ctrl-Q detaches, leaving it running. The
command exits like the execution once it ends.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import threading

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http
from workbench.cli.ids import resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Ctrl-P Ctrl-Q, as docker's: leave the execution running.
DETACH_KEYS = b"\x10\x11"
_CHUNK = 65536


def cmd_attach(http: Http, args: argparse.Namespace) -> int:
    execution_id = resolve(http, args.id)
    record = http.json("GET", f"/v1/executions/{execution_id}")
    if record["status"] in ("completed", "failed", "cancelled", "timed_out", "partial_failed"):
        raise UsageError(
            f"{execution_id} has ended ({record['status']}): see `workbench logs {execution_id}`"
        )
    if not record.get("openStdin"):
        raise UsageError(f"{execution_id} was started without -i or -t: it takes no input")
    return join(http, execution_id, tty=bool(record.get("tty")))


def run_interactive(http: Http, body: dict[str, Any], key: str | None) -> int:
    """Start `body` (a bash start with `openStdin` or `tty`) in the background and join it."""
    headers = {"Idempotency-Key": key} if key else None
    record = http.json(
        "POST", "/v1/executions/workbench_bash", {**body, "background": True}, headers=headers, ok=(200, 202)
    )
    return join(http, record["executionId"], tty=bool(body.get("tty")))


def join(http: Http, execution_id: str, *, tty: bool) -> int:
    """Follow the execution's output to its end while our stdin goes to it; its exit status."""
    raw = tty and os.isatty(0)
    saved = None
    wake_r, wake_w = os.pipe()
    if raw:
        import termios
        import tty as terminal

        saved = termios.tcgetattr(0)
        terminal.setraw(0)
        signal.signal(signal.SIGWINCH, lambda _s, _f: os.write(wake_w, b"w"))
        os.write(wake_w, b"w")  # send our size once at the start
    feeder = _Feeder(Http(http.target), execution_id, raw, wake_r, saved)
    threading.Thread(target=feeder.run, name="input", daemon=True).start()
    try:
        for kind, event in http.stream(execution_id, 0):
            if kind == "event" and event["eventType"] == "status" and event["status"] != "queued":
                feeder.running.set()  # input before it runs would be refused
            if kind in ("event", "live") and event.get("eventType") == "output" and event.get("outputDelta"):
                os.write(1, event["outputDelta"].encode("utf-8"))
    finally:
        _restore(saved)
    record = http.json("GET", f"/v1/executions/{execution_id}")
    if record["status"] != "completed":
        exitcodes.report(execution_id, record)
    return exitcodes.of_record(record)


def _restore(saved: Any) -> None:
    if saved is not None:
        import termios

        termios.tcsetattr(0, termios.TCSADRAIN, saved)


class _Feeder:
    """Our stdin to the execution's input, and our window size to its terminal."""

    def __init__(self, http: Http, execution_id: str, raw: bool, wake: int, saved: Any) -> None:
        self.http, self.execution_id, self.raw, self.wake, self.saved = http, execution_id, raw, wake, saved
        self.path = f"/v1/executions/{execution_id}"
        self.held = b""  # a Ctrl-P that may begin the detach keys
        self.running = threading.Event()

    def run(self) -> None:
        self.running.wait()
        try:
            while self._step():
                pass
        except ApiError:
            pass  # ended, or the daemon went away: the stream says how it ends

    def _step(self) -> bool:
        ready, _, _ = select.select([0, self.wake], [], [])
        if self.wake in ready:
            os.read(self.wake, 4096)
            size = os.get_terminal_size(0)
            self.http.request(
                "POST", self.path + "/resize", {"rows": size.lines, "cols": size.columns}, ok=(204,)
            )
        if 0 not in ready:
            return True
        data = os.read(0, _CHUNK)
        if not data:
            self._send(self.held, eof=True)
            return False
        data, self.held = self.held + data, b""
        if self.raw and DETACH_KEYS in data:
            self._send(data[: data.index(DETACH_KEYS)])
            self._detach()
        if self.raw and data.endswith(DETACH_KEYS[:1]):
            data, self.held = data[:-1], DETACH_KEYS[:1]
        self._send(data)
        return True

    def _send(self, data: bytes, *, eof: bool = False) -> None:
        if data or eof:
            query = {"eof": "true" if eof else "false"}
            self.http.request_bytes("POST", self.path + "/input", data, query=query, ok=(204,))

    def _detach(self) -> None:
        _restore(self.saved)
        eid = self.execution_id
        sys.stderr.write(f"\r\nworkbench: detached from {eid}; it runs on (`workbench attach {eid}`)\n")
        sys.stderr.flush()
        os._exit(exitcodes.OK)
